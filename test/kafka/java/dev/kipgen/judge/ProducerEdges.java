package dev.kipgen.judge;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * What a producer meets at the edges: every compression codec, a topic's max.message.bytes, a
 * topic created by Metadata on first use, acks=0 and acks=1; and a consumer's timestamp lookups.
 */
final class ProducerEdges {
    private final Clients clients;

    ProducerEdges(Clients clients) {
        this.clients = clients;
    }

    void run(Out out) throws Exception {
        try (Admin admin = clients.admin()) {
            for (String codec : List.of("none", "gzip", "snappy", "lz4", "zstd")) {
                String topic = Names.of("judge-codec-") + codec;
                Clients.createTopic(admin, topic, 1);
                out.step("compression " + codec, () -> {
                    try (KafkaProducer<String, String> p = clients.producer(Names.of("judge-codec"), Clients.props("compression.type", codec, "linger.ms", "50"))) {
                        for (int i = 0; i < 3; i++) p.send(new ProducerRecord<>(topic, 0, "k" + i, codec + i));
                        p.flush();
                    }
                    return clients.readAll(topic, 1, "read_uncommitted");
                });
            }
            out.step("max.message.bytes", () -> {
                admin.createTopics(List.of(new NewTopic(Names.of("judge-small"), 1, (short) 1).configs(Map.of("max.message.bytes", "200")))).all().get();
                try (KafkaProducer<String, String> p = clients.producer(Names.of("judge-small"), Clients.props("retries", "0"))) {
                    p.send(new ProducerRecord<>(Names.of("judge-small"), 0, "k", "x".repeat(10))).get();
                    p.send(new ProducerRecord<>(Names.of("judge-small"), 0, "k", "y".repeat(1000))).get();
                }
                return null;
            });
            out.step("max.message.bytes read", () -> clients.readAll(Names.of("judge-small"), 1, "read_uncommitted"));
        }
        out.step("auto-created topic", () -> {
            try (KafkaProducer<String, String> p = clients.producer(Names.of("judge-auto"), new java.util.Properties())) {
                return Producers.sent(p.send(new ProducerRecord<>(Names.of("judge-auto-created"), "k", "v")).get());
            }
        });
        try (Admin admin = clients.admin()) {
            out.step("auto-created topic partitions", () -> String.valueOf(admin.describeTopics(List.of(Names.of("judge-auto-created"))).allTopicNames().get().get(Names.of("judge-auto-created")).partitions().size()));
        }
        // acks=1 first: an acks=0 send is not waited for, so a later producer's record could overtake it.
        for (String acks : List.of("1", "0")) {
            out.step("acks=" + acks, () -> {
                try (KafkaProducer<String, String> p = clients.producer(Names.of("judge-acks"), Clients.props("acks", acks, "enable.idempotence", "false"))) {
                    // acks=0: the client knows no offset (-1).
                    return Producers.sent(p.send(new ProducerRecord<>(Names.of("judge-codec-none"), 0, "k", "acks" + acks)).get());
                }
            });
        }

        String topic = Names.of("judge-times");
        try (Admin admin = clients.admin()) {
            Clients.createTopic(admin, topic, 1);
        }
        try (KafkaProducer<String, String> p = clients.producer(Names.of("judge-times"), Clients.props("enable.idempotence", "true"))) {
            long[] times = {1_700_000_000_000L, 1_700_000_005_000L, 1_700_000_002_000L, 1_700_000_009_000L};
            for (int i = 0; i < times.length; i++) p.send(new ProducerRecord<>(topic, 0, times[i], "k", "t" + i)).get();
        }
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> c = clients.consumer(Names.of("judge-times"), new java.util.Properties())) {
            for (long at : new long[] {1_600_000_000_000L, 1_700_000_001_000L, 1_700_000_005_000L, 1_700_000_006_000L, 1_800_000_000_000L}) {
                out.step("offsetsForTimes " + at, () -> {
                    OffsetAndTimestamp found = c.offsetsForTimes(Map.of(tp, at)).get(tp);
                    return found == null ? "none" : "offset=" + found.offset() + " timestamp=" + found.timestamp() + " epoch=" + found.leaderEpoch().map(String::valueOf).orElse("absent");
                });
            }
            out.step("beginningOffsets", () -> String.valueOf(c.beginningOffsets(Set.of(tp)).get(tp)));
            out.step("endOffsets", () -> String.valueOf(c.endOffsets(Set.of(tp)).get(tp)));
            out.step("timestamps", () -> {
                c.assign(List.of(tp));
                c.seekToBeginning(List.of(tp));
                return Consumers.pollUntilAssigned(c, 4).stream().map(r -> r.offset() + "@" + r.timestamp() + "/" + r.timestampType()).collect(Collectors.joining(" "));
            });
        }
    }

    /** Admin's transaction tools: listing, describing, describing producers, fencing. */
    void transactions(Out out) throws Exception {
        String topic = Names.of("judge-txn-admin");
        try (Admin admin = clients.admin()) {
            Clients.createTopic(admin, topic, 1);
            KafkaProducer<String, String> open = clients.producer(Names.of("judge-txn-admin"), Clients.props("transactional.id", Names.of("judge-txn-admin")));
            try {
                open.initTransactions();
                open.beginTransaction();
                out.step("open send", () -> Producers.sent(open.send(new ProducerRecord<>(topic, 0, "k", "v")).get()));
                out.step("listTransactions", () -> admin.listTransactions().all().get().stream()
                        .filter(t -> t.transactionalId().startsWith(Names.of("judge-txn-admin"))).map(t -> t.transactionalId() + ":" + t.state()).sorted().collect(Collectors.joining(" ")));
                out.step("describeTransactions", () -> {
                    var d = admin.describeTransactions(List.of(Names.of("judge-txn-admin"))).all().get().get(Names.of("judge-txn-admin"));
                    return d.state() + " timeout=" + d.transactionTimeoutMs() + " partitions=" + Clients.partitions(d.topicPartitions());
                });
                out.step("describeProducers", () -> admin.describeProducers(List.of(new TopicPartition(topic, 0))).all().get().get(new TopicPartition(topic, 0)).activeProducers().stream()
                        .map(s -> "lastSequence=" + s.lastSequence() + " epoch=" + s.producerEpoch() + " txnStart=" + s.currentTransactionStartOffset().orElse(-1)).collect(Collectors.joining(" ")));
                out.step("fenceProducers", () -> {
                    admin.fenceProducers(List.of(Names.of("judge-txn-admin"))).all().get();
                    return null;
                });
                out.step("send after fenceProducers", () -> Producers.sent(open.send(new ProducerRecord<>(topic, 0, "k", "w")).get()));
                out.step("commit after fenceProducers", () -> {
                    open.commitTransaction();
                    return null;
                });
            } finally {
                open.close(java.time.Duration.ZERO);
            }
            out.step("read", () -> clients.readAll(topic, 1, "read_committed"));
        }
    }
}
