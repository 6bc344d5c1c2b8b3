package dev.kipgen.judge;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Runs named scenarios with Apache Kafka's own Java clients against brokers and prints one
 * normalized line per step (see Out). The same run against Apache Kafka and against kipgen's
 * broker must print the same lines, except the differences test/kafka/differences.json lists.
 *
 * Usage: Judge [--tag prefix] --target name=host:port [--target name=host:port ...] [scenario...]
 * (no scenario: all of them, in the order below). Each target runs in its own thread — one JVM
 * for the whole comparison — and its lines are printed together when it is done, each as
 * `<target> <scenario> <step>: <result>`, after a `<target> done` line. Scenarios run in the
 * order given; admin.groups describes the groups the consumer and share scenarios before it
 * left, so it comes after them.
 */
public final class Judge {
    @FunctionalInterface
    interface Scenario {
        void run(Out out) throws Exception;
    }

    public static void main(String[] args) throws InterruptedException {
        Map<String, String> targets = new LinkedHashMap<>();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--tag") && i + 1 < args.length) {
                Names.tag(args[++i]);
            } else if (args[i].equals("--target") && i + 1 < args.length) {
                String[] t = args[++i].split("=", 2);
                if (t.length != 2 || t[0].isEmpty() || t[1].isEmpty()) usage("--target wants name=host:port, got " + args[i]);
                targets.put(t[0], t[1]);
            } else {
                names.add(args[i]);
            }
        }
        if (targets.isEmpty()) usage("no --target");
        Set<String> known = scenarios(new Clients("unused")).keySet();
        if (names.isEmpty()) names.addAll(known);
        for (String name : names) if (!known.contains(name)) usage("unknown scenario " + name + "; known: " + String.join(", ", known));

        Map<String, List<String>> lines = new LinkedHashMap<>();
        List<Thread> threads = new ArrayList<>();
        for (Map.Entry<String, String> target : targets.entrySet()) {
            List<String> out = new ArrayList<>();
            lines.put(target.getKey(), out);
            Thread thread = new Thread(() -> runTarget(target.getKey(), target.getValue(), names, out), Names.of("judge-") + target.getKey());
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) thread.join();
        lines.forEach((target, out) -> {
            for (String line : out) System.out.println(target + " " + line);
            System.out.println(target + " done");
        });
        System.out.flush();
        // Client threads (metadata, heartbeats of producers closed at once) must not keep the JVM up.
        System.exit(0);
    }

    private static void usage(String problem) {
        System.err.println("Judge: " + problem + "\nusage: Judge [--tag prefix] --target name=host:port [--target ...] [scenario...]");
        System.exit(2);
    }

    private static void runTarget(String target, String bootstrap, List<String> names, List<String> lines) {
        Map<String, Scenario> scenarios = scenarios(new Clients(bootstrap));
        for (String name : names) {
            Out out = new Out(target, name, lines);
            long start = System.nanoTime();
            try {
                scenarios.get(name).run(out);
            } catch (Throwable t) {
                // A failure outside a step (setting up) ends the scenario, not the run.
                out.line("aborted", "error " + Out.name(t));
                System.err.println(target + " " + name + " aborted:");
                t.printStackTrace();
            }
            System.err.printf("%s: scenario %s took %d ms%n", target, name, (System.nanoTime() - start) / 1_000_000);
        }
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
        s.put("producer.fencing", producers::fencing);
        s.put("producer.offsets_in_transaction", producers::offsetsInTransaction);
        ProducerEdges edges = new ProducerEdges(clients);
        s.put("producer.edges", edges::run);
        s.put("admin.transactions", edges::transactions);
        s.put("consumer.classic", out -> consumers.group(out, "classic"));
        s.put("consumer.consumer", out -> consumers.group(out, "consumer"));
        s.put("consumer.read_committed", consumers::readCommitted);
        s.put("consumer.static", consumers::staticMember);
        s.put("consumer.regex", consumers::regex);
        s.put("share.implicit", share::implicit);
        s.put("share.explicit", share::explicit);
        s.put("share.read_committed", share::readCommitted);
        s.put("share.delivery_limit", share::deliveryLimit);
        s.put("admin.topics", admins::topics);
        s.put("admin.configs", admins::configs);
        s.put("admin.acls", admins::acls);
        s.put("admin.groups", admins::groups);
        s.put("admin.active_groups", new ActiveGroups(clients)::run);
        s.put("admin.cluster", admins::cluster);
        s.put("admin.offsets", admins::offsets);
        return s;
    }
}
