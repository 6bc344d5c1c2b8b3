package dev.kipgen.judge;

import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * The one place that writes the judge's output: one line per step, `scenario step: result`,
 * nothing that differs from run to run (no timestamps, producer ids, ports, member ids).
 * Errors are the Kafka exception's simple class name; the message goes to stderr only,
 * because it names ids and hosts.
 */
final class Out {
    private final String target;
    private final String scenario;
    private final List<String> lines;

    /** Lines go to `lines` (the target's, printed together at the end); messages to stderr, labelled. */
    Out(String target, String scenario, List<String> lines) {
        this.target = target;
        this.scenario = scenario;
        this.lines = lines;
    }

    void line(String step, String result) {
        if (step.contains(": ")) throw new IllegalArgumentException("a step name holds no \": \" (it separates the result): " + step);
        lines.add(Names.untagged(scenario + " " + step + ": " + result));
    }

    /** Runs a step that may fail: prints `ok` (or what it returns) or the exception's class. */
    void step(String step, Step body) {
        try {
            String result = body.run();
            line(step, result == null ? "ok" : result);
        } catch (Throwable t) {
            line(step, "error " + name(t));
            System.err.println(target + " " + scenario + " " + step + ": " + root(t));
        }
    }

    /** What a failed step prints: the class of the exception the client raised, wrappers of futures removed. */
    static String name(Throwable t) {
        return root(t).getClass().getSimpleName();
    }

    static Throwable root(Throwable t) {
        Throwable cur = t;
        while ((cur instanceof ExecutionException || cur instanceof CompletionException) && cur.getCause() != null) cur = cur.getCause();
        return cur;
    }

    @FunctionalInterface
    interface Step {
        String run() throws Exception;
    }
}
