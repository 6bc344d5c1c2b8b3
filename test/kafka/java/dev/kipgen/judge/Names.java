package dev.kipgen.judge;

/**
 * Every topic, group, transactional and client id the scenarios use goes through here, so that
 * a run can prefix them with a tag (Judge --tag) and run again against a broker that has the
 * previous run's names (a Kafka kept up with test/kafka/support/serve.ts). Out removes the tag
 * from what it prints, so tagged and untagged runs print the same lines.
 */
final class Names {
    private static volatile String tag = "";

    private Names() {}

    static void tag(String value) {
        if (!value.matches("[A-Za-z0-9._-]*")) throw new IllegalArgumentException("--tag may hold only letters, digits, '.', '_' and '-': " + value);
        tag = value;
    }

    static String of(String name) {
        return tag + name;
    }

    /** The line without the tag. */
    static String untagged(String line) {
        return tag.isEmpty() ? line : line.replace(tag, "");
    }
}
