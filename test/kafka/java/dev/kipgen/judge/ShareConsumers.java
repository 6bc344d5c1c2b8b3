package dev.kipgen.judge;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;

/** KafkaShareConsumer scenarios (KIP-932): implicit and explicit acknowledgement. */
final class ShareConsumers {
    private final Clients clients;

    ShareConsumers(Clients clients) {
        this.clients = clients;
    }

    private KafkaShareConsumer<String, String> consumer(String clientId, String group, String mode) {
        var p = clients.base(clientId);
        p.put("group.id", group);
        p.put("share.acknowledgement.mode", mode);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        return new KafkaShareConsumer<>(p);
    }

    /** A topic with records and a share group that starts at the earliest offset (group config share.auto.offset.reset). */
    private void setUp(Out out, String topic, String group, String... values) throws Exception {
        try (Admin admin = clients.admin()) {
            Clients.createTopic(admin, topic, 1);
            out.step("group config share.auto.offset.reset=earliest", () -> {
                ConfigResource r = new ConfigResource(ConfigResource.Type.GROUP, group);
                admin.incrementalAlterConfigs(Map.of(r, List.of(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all().get();
                return null;
            });
        }
        clients.fill(topic, 0, values);
    }

    /** Implicit mode: every record a poll returned is accepted by the next poll or commitSync. */
    void implicit(Out out) throws Exception {
        String topic = Names.of("judge-share-implicit");
        String group = Names.of("judge-share-implicit");
        setUp(out, topic, group, "s0", "s1", "s2", "s3");
        try (KafkaShareConsumer<String, String> c = consumer(Names.of("judge-share-implicit-1"), group, "implicit")) {
            c.subscribe(List.of(topic));
            out.step("subscription", () -> String.join(",", c.subscription()));
            out.step("poll", () -> shared(pollUntil(c, 4)));
            out.step("commitSync", () -> commitResult(c.commitSync()));
            out.step("poll again", () -> shared(pollFor(c, Duration.ofSeconds(2))));
        }
        clients.fill(topic, 0, "s4");
        try (KafkaShareConsumer<String, String> c = consumer(Names.of("judge-share-implicit-2"), group, "implicit")) {
            c.subscribe(List.of(topic));
            out.step("second consumer poll", () -> shared(pollUntil(c, 1)));
        }
    }

    /**
     * Explicit mode: accept, release and reject one record each; the released one comes
     * back with delivery count 2; acknowledging a record twice is an error of the client.
     */
    void explicit(Out out) throws Exception {
        String topic = Names.of("judge-share-explicit");
        String group = Names.of("judge-share-explicit");
        setUp(out, topic, group, "e0", "e1", "e2");
        try (KafkaShareConsumer<String, String> c = consumer(Names.of("judge-share-explicit-1"), group, "explicit")) {
            c.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> first = pollUntil(c, 3);
            out.step("poll", () -> shared(first));
            out.step("acknowledge", () -> {
                for (ConsumerRecord<String, String> r : first) {
                    AcknowledgeType type = switch (r.value()) {
                        case "e0" -> AcknowledgeType.ACCEPT;
                        case "e1" -> AcknowledgeType.RELEASE;
                        default -> AcknowledgeType.REJECT;
                    };
                    c.acknowledge(r, type);
                }
                return null;
            });
            out.step("acknowledge twice", () -> {
                c.acknowledge(first.get(0), AcknowledgeType.ACCEPT);
                return null;
            });
            out.step("commitSync", () -> commitResult(c.commitSync()));
            List<ConsumerRecord<String, String>> again = pollUntil(c, 1);
            out.step("poll released", () -> shared(again));
            out.step("accept released", () -> {
                for (ConsumerRecord<String, String> r : again) c.acknowledge(r, AcknowledgeType.ACCEPT);
                return commitResult(c.commitSync());
            });
            out.step("poll after", () -> shared(pollFor(c, Duration.ofSeconds(2))));
        }
    }

    /**
     * A share group with share.isolation.level=read_committed over committed, aborted and open
     * transactions: only committed records, up to the open transaction, then its records once it commits.
     */
    void readCommitted(Out out) throws Exception {
        String topic = Names.of("judge-share-rc");
        String group = Names.of("judge-share-rc");
        try (Admin admin = clients.admin()) {
            Clients.createTopic(admin, topic, 1);
            ConfigResource r = new ConfigResource(ConfigResource.Type.GROUP, group);
            out.step("group configs", () -> {
                admin.incrementalAlterConfigs(Map.of(r, List.of(
                        new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET),
                        new AlterConfigOp(new ConfigEntry("share.isolation.level", "read_committed"), AlterConfigOp.OpType.SET)))).all().get();
                return null;
            });
        }
        try (var p = clients.producer(Names.of("judge-share-rc-producer"), Clients.props("transactional.id", Names.of("judge-share-rc")));
                KafkaShareConsumer<String, String> c = consumer(Names.of("judge-share-rc-1"), group, "implicit")) {
            p.initTransactions();
            Producers.transaction(out, p, topic, "commit", "q0", "q1");
            Producers.transaction(out, p, topic, "abort", "q2");
            p.beginTransaction();
            out.step("open send q3", () -> Producers.sent(p.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, 0, "k", "q3")).get()));
            c.subscribe(List.of(topic));
            out.step("poll", () -> shared(pollUntil(c, 2)));
            out.step("poll while open", () -> shared(pollFor(c, Duration.ofSeconds(2))));
            out.step("commit open", () -> {
                p.commitTransaction();
                return null;
            });
            out.step("poll after commit", () -> shared(pollUntil(c, 1)));
        }
    }

    /**
     * Releasing one record again and again: each redelivery counts up, and after
     * share.delivery.count.limit (5, Kafka's default) deliveries the released record is archived.
     * Also the acquisition lock time the broker tells the client.
     */
    void deliveryLimit(Out out) throws Exception {
        String topic = Names.of("judge-share-limit");
        String group = Names.of("judge-share-limit");
        setUp(out, topic, group, "d0");
        try (KafkaShareConsumer<String, String> c = consumer(Names.of("judge-share-limit-1"), group, "explicit")) {
            c.subscribe(List.of(topic));
            for (int round = 1; round <= 5; round++) {
                List<ConsumerRecord<String, String>> got = pollUntil(c, 1);
                out.step("round " + round + " poll", () -> shared(got));
                if (round == 1) out.step("acquisition lock timeout", () -> c.acquisitionLockTimeoutMs().map(String::valueOf).orElse("absent"));
                out.step("round " + round + " release", () -> {
                    for (ConsumerRecord<String, String> rec : got) c.acknowledge(rec, AcknowledgeType.RELEASE);
                    return commitResult(c.commitSync());
                });
            }
            out.step("after the limit", () -> shared(pollFor(c, Duration.ofSeconds(2))));
        }
    }

    static List<ConsumerRecord<String, String>> pollUntil(KafkaShareConsumer<String, String> c, int n) {
        List<ConsumerRecord<String, String>> got = new ArrayList<>();
        long deadline = System.nanoTime() + Clients.PATIENCE.toNanos();
        while (got.size() < n && System.nanoTime() < deadline) c.poll(Duration.ofMillis(500)).forEach(got::add);
        return got;
    }

    static List<ConsumerRecord<String, String>> pollFor(KafkaShareConsumer<String, String> c, Duration d) {
        List<ConsumerRecord<String, String>> got = new ArrayList<>();
        long deadline = System.nanoTime() + d.toNanos();
        while (System.nanoTime() < deadline) c.poll(Duration.ofMillis(200)).forEach(got::add);
        return got;
    }

    static String shared(List<ConsumerRecord<String, String>> records) {
        if (records.isEmpty()) return "none";
        return records.stream()
                .sorted(Comparator.<ConsumerRecord<String, String>>comparingInt(ConsumerRecord::partition).thenComparingLong(ConsumerRecord::offset))
                .map(r -> "p" + r.partition() + "@" + r.offset() + "=" + r.value() + "#" + r.deliveryCount().map(String::valueOf).orElse("?"))
                .collect(Collectors.joining(" "));
    }

    static String commitResult(Map<TopicIdPartition, Optional<KafkaException>> result) {
        if (result.isEmpty()) return "nothing";
        return result.entrySet().stream()
                .sorted(Comparator.comparing((Map.Entry<TopicIdPartition, Optional<KafkaException>> e) -> e.getKey().topic()).thenComparingInt(e -> e.getKey().partition()))
                .map(e -> e.getKey().topic() + "-" + e.getKey().partition() + "=" + e.getValue().map(Out::name).orElse("ok"))
                .collect(Collectors.joining(" "));
    }
}
