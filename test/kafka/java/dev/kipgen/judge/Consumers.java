package dev.kipgen.judge;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;

/** KafkaConsumer scenarios in a group: the classic protocol, KIP-848's consumer protocol, read_committed. */
final class Consumers {
    private final Clients clients;

    Consumers(Clients clients) {
        this.clients = clients;
    }

    /**
     * Subscribe, poll everything, commitSync, committed(), seek back and poll again, then a
     * second member of the group after the first closed: it starts from the commits.
     */
    void group(Out out, String protocol) throws Exception {
        String topic = Names.of("judge-group-") + protocol;
        String group = Names.of("judge-") + protocol;
        try (Admin admin = clients.admin()) {
            Clients.createTopic(admin, topic, 2);
        }
        clients.fill(topic, 0, "a0", "a1", "a2");
        clients.fill(topic, 1, "b0", "b1");
        TopicPartition p0 = new TopicPartition(topic, 0);
        TopicPartition p1 = new TopicPartition(topic, 1);
        try (KafkaConsumer<String, String> c = clients.consumer(Names.of("judge-") + protocol + "-1", Clients.props("group.id", group, "group.protocol", protocol))) {
            c.subscribe(List.of(topic));
            out.step("poll", () -> Clients.records(pollUntil(c, 5)));
            out.step("assignment", () -> Clients.partitions(c.assignment()));
            out.step("position", () -> "p0=" + c.position(p0) + " p1=" + c.position(p1));
            out.step("committed before", () -> committed(c.committed(Set.of(p0, p1))));
            out.step("commitSync", () -> {
                c.commitSync();
                return null;
            });
            out.step("committed", () -> committed(c.committed(Set.of(p0, p1))));
            out.step("commitSync explicit", () -> {
                c.commitSync(Map.of(p1, new OffsetAndMetadata(1, "meta")));
                return committed(c.committed(Set.of(p0, p1)));
            });
            out.step("seek p0=1", () -> {
                c.seek(p0, 1);
                return Clients.records(pollUntil(c, 2));
            });
            out.step("group metadata", () -> "group=" + c.groupMetadata().groupId() + " generation>0=" + (c.groupMetadata().generationId() > 0));
        }
        try (KafkaConsumer<String, String> c = clients.consumer(Names.of("judge-") + protocol + "-2", Clients.props("group.id", group, "group.protocol", protocol))) {
            c.subscribe(List.of(topic));
            out.step("second member poll", () -> Clients.records(pollUntil(c, 1)));
            out.step("second member committed", () -> committed(c.committed(Set.of(p0, p1))));
        }
    }

    /**
     * Static membership (group.instance.id) in a classic group: closing the member does not make
     * it leave, and a new consumer with the same instance id takes its place and assignment.
     */
    void staticMember(Out out) throws Exception {
        String topic = Names.of("judge-static");
        String group = Names.of("judge-static");
        try (Admin admin = clients.admin()) {
            Clients.createTopic(admin, topic, 2);
            // max.poll.interval.ms is the classic rebalance timeout: kipgen, which treats a returning static member as a new
            // one (differences.json), waits that long for the closed member before it rebalances without it.
            var config = Clients.props("group.id", group, "group.protocol", "classic", "group.instance.id", Names.of("judge-instance"), "session.timeout.ms", "45000", "max.poll.interval.ms", "10000");
            try (KafkaConsumer<String, String> c = clients.consumer(Names.of("judge-static-1"), config)) {
                c.subscribe(List.of(topic));
                out.step("first assignment", () -> Clients.partitions(assigned(c)));
            }
            out.step("after close", () -> {
                var d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                return d.groupState() + " members=" + d.members().stream().map(m -> m.groupInstanceId().orElse("none")).sorted().collect(java.util.stream.Collectors.joining(","));
            });
            try (KafkaConsumer<String, String> c = clients.consumer(Names.of("judge-static-2"), config)) {
                c.subscribe(List.of(topic));
                out.step("replacement assignment", () -> Clients.partitions(assigned(c)));
                out.step("described", () -> {
                    var d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
                    return d.groupState() + " members=" + d.members().stream().map(m -> m.groupInstanceId().orElse("none") + "/" + m.clientId()).sorted().collect(java.util.stream.Collectors.joining(","));
                });
            }
        }
    }

    /**
     * Subscribing by pattern: the classic protocol matches topics in the client (java.util.regex
     * against metadata), the consumer protocol on the broker (KIP-848's SubscribedTopicRegex, RE2J).
     */
    void regex(Out out) throws Exception {
        try (Admin admin = clients.admin()) {
            Clients.createTopic(admin, Names.of("judge-regex-a"), 1);
            Clients.createTopic(admin, Names.of("judge-regex-b"), 1);
        }
        try (KafkaConsumer<String, String> c = clients.consumer(Names.of("judge-regex-classic"), Clients.props("group.id", Names.of("judge-regex-classic"), "group.protocol", "classic"))) {
            c.subscribe(java.util.regex.Pattern.compile(java.util.regex.Pattern.quote(Names.of("judge-regex-")) + "[ab]"));
            out.step("classic pattern assignment", () -> Clients.partitions(assigned(c)));
        }
        try (KafkaConsumer<String, String> c = clients.consumer(Names.of("judge-regex-consumer"), Clients.props("group.id", Names.of("judge-regex-consumer"), "group.protocol", "consumer"))) {
            c.subscribe(new org.apache.kafka.clients.consumer.SubscriptionPattern(Names.of("judge-regex-") + "[ab]"));
            out.step("consumer SubscriptionPattern assignment", () -> Clients.partitions(assigned(c)));
        }
    }

    static Set<TopicPartition> assigned(KafkaConsumer<String, String> c) {
        long deadline = System.nanoTime() + Clients.PATIENCE.toNanos();
        while (c.assignment().isEmpty() && System.nanoTime() < deadline) c.poll(Duration.ofMillis(200));
        return c.assignment();
    }

    /** A group consumer with isolation.level=read_committed over committed and aborted transactions. */
    void readCommitted(Out out) throws Exception {
        String topic = Names.of("judge-read-committed");
        try (Admin admin = clients.admin()) {
            Clients.createTopic(admin, topic, 1);
        }
        try (KafkaProducer<String, String> p = clients.producer(Names.of("judge-rc-producer"), Clients.props("transactional.id", Names.of("judge-rc")))) {
            p.initTransactions();
            Producers.transaction(out, p, topic, "commit", "r0", "r1");
            Producers.transaction(out, p, topic, "abort", "r2");
            Producers.transaction(out, p, topic, "commit", "r3");
            p.beginTransaction();
            out.step("open send r4", () -> Producers.sent(p.send(new org.apache.kafka.clients.producer.ProducerRecord<>(topic, 0, "k", "r4")).get()));
            TopicPartition tp = new TopicPartition(topic, 0);
            try (KafkaConsumer<String, String> c = clients.consumer(Names.of("judge-rc"), Clients.props("group.id", Names.of("judge-rc"), "isolation.level", "read_committed"))) {
                c.subscribe(List.of(topic));
                out.step("poll", () -> Clients.records(pollUntil(c, 3)));
                out.step("position while open", () -> "p0=" + c.position(tp));
                out.step("end offsets", () -> "p0=" + c.endOffsets(Set.of(tp)).get(tp));
                out.step("commit open", () -> {
                    p.commitTransaction();
                    return null;
                });
                out.step("poll after commit", () -> Clients.records(pollUntil(c, 1)));
                out.step("position", () -> "p0=" + c.position(tp));
                out.step("commitSync", () -> {
                    c.commitSync();
                    return committed(c.committed(Set.of(tp)));
                });
            }
        }
    }

    /** Polls until `n` records came or the patience ran out; then a short poll to catch extras. */
    static List<ConsumerRecord<String, String>> pollUntil(KafkaConsumer<String, String> c, int n) {
        List<ConsumerRecord<String, String>> got = new ArrayList<>();
        long deadline = System.nanoTime() + Clients.PATIENCE.toNanos();
        while (got.size() < n && System.nanoTime() < deadline) c.poll(Duration.ofMillis(200)).forEach(got::add);
        return got;
    }

    /** pollUntil for an assigned (group-less) consumer. */
    static List<ConsumerRecord<String, String>> pollUntilAssigned(KafkaConsumer<String, String> c, int n) {
        return pollUntil(c, n);
    }

    static String committed(Map<TopicPartition, OffsetAndMetadata> offsets) {
        Map<String, String> sorted = new TreeMap<>();
        offsets.forEach((tp, om) -> sorted.put("p" + tp.partition(), om == null ? "none" : om.offset() + (om.metadata().isEmpty() ? "" : "/" + om.metadata()) + (om.leaderEpoch().isPresent() ? " epoch=" + om.leaderEpoch().get() : "")));
        List<String> parts = new ArrayList<>();
        sorted.forEach((k, v) -> parts.add(k + "=" + v));
        return String.join(" ", parts);
    }
}
