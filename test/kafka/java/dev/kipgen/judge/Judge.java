package dev.kipgen.judge;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs named scenarios with Apache Kafka's own Java clients against one broker and prints one
 * normalized line per step (see Out). The same run against Apache Kafka and against kipgen's
 * broker must print the same lines, except the differences test/kafka/differences.json lists.
 *
 * Usage: Judge --bootstrap host:port scenario...   (no scenario: all of them, in the order below)
 * Scenarios run in the order given; admin.groups describes the groups that the consumer and
 * share scenarios before it left, so it comes after them.
 */
public final class Judge {
    @FunctionalInterface
    interface Scenario {
        void run(Out out) throws Exception;
    }

    public static void main(String[] args) {
        String bootstrap = null;
        List<String> names = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--bootstrap") && i + 1 < args.length) bootstrap = args[++i];
            else names.add(args[i]);
        }
        if (bootstrap == null) {
            System.err.println("usage: Judge --bootstrap host:port [scenario...]");
            System.exit(2);
        }
        Map<String, Scenario> scenarios = scenarios(new Clients(bootstrap));
        if (names.isEmpty()) names.addAll(scenarios.keySet());
        for (String name : names) {
            if (!scenarios.containsKey(name)) {
                System.err.println("unknown scenario " + name + "; known: " + String.join(", ", scenarios.keySet()));
                System.exit(2);
            }
        }
        for (String name : names) {
            Out out = new Out(name);
            long start = System.nanoTime();
            try {
                scenarios.get(name).run(out);
            } catch (Throwable t) {
                // A failure outside a step (setting up) ends the scenario, not the run.
                out.line("aborted", "error " + Out.name(t));
                t.printStackTrace();
            }
            System.err.printf("scenario %s took %d ms%n", name, (System.nanoTime() - start) / 1_000_000);
        }
        // Client threads (metadata, heartbeats of closed-at-once producers) must not keep the JVM up.
        System.exit(0);
    }

    static Map<String, Scenario> scenarios(Clients clients) {
        Producers producers = new Producers(clients);
        Consumers consumers = new Consumers(clients);
        ShareConsumers share = new ShareConsumers(clients);
        Admins admins = new Admins(clients);
        Map<String, Scenario> s = new LinkedHashMap<>();
        s.put("producer.idempotent", producers::idempotent);
        s.put("producer.transactional", producers::transactional);
        s.put("producer.2pc", producers::twoPhase);
        s.put("consumer.classic", out -> consumers.group(out, "classic"));
        s.put("consumer.consumer", out -> consumers.group(out, "consumer"));
        s.put("consumer.read_committed", consumers::readCommitted);
        s.put("share.implicit", share::implicit);
        s.put("share.explicit", share::explicit);
        s.put("admin.topics", admins::topics);
        s.put("admin.configs", admins::configs);
        s.put("admin.acls", admins::acls);
        s.put("admin.groups", admins::groups);
        s.put("admin.cluster", admins::cluster);
        s.put("admin.offsets", admins::offsets);
        return s;
    }
}
