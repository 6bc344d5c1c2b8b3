package dev.kipgen.judge;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** Client factories and the few helpers every scenario shares (create a topic, fill it, read it back). */
final class Clients {
    /** How long a scenario waits for records it knows are there before it prints what it got. */
    static final Duration PATIENCE = Duration.ofSeconds(30);

    private final String bootstrap;

    Clients(String bootstrap) {
        this.bootstrap = bootstrap;
    }

    Properties base(String clientId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", clientId);
        return p;
    }

    Admin admin() {
        Properties p = base(Names.of("judge-admin"));
        p.put("request.timeout.ms", "15000");
        p.put("default.api.timeout.ms", "30000");
        return Admin.create(p);
    }

    KafkaProducer<String, String> producer(String clientId, Properties extra) {
        Properties p = base(clientId);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("max.block.ms", "30000");
        p.put("linger.ms", "0");
        p.putAll(extra);
        return new KafkaProducer<>(p);
    }

    KafkaConsumer<String, String> consumer(String clientId, Properties extra) {
        Properties p = base(clientId);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.putAll(extra);
        return new KafkaConsumer<>(p);
    }

    static Properties props(String... kv) {
        Properties p = new Properties();
        for (int i = 0; i < kv.length; i += 2) p.put(kv[i], kv[i + 1]);
        return p;
    }

    /** Creates the topic and waits until its metadata has spread (Kafka answers CreateTopics before that). */
    static void createTopic(Admin admin, String topic, int partitions) throws ExecutionException, InterruptedException {
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (true) {
            try {
                if (admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size() == partitions) return;
            } catch (ExecutionException e) {
                if (System.nanoTime() > deadline) throw e;
            }
            if (System.nanoTime() > deadline) return;
            Thread.sleep(50);
        }
    }

    /** Sends `values` to one partition without a transaction, idempotently, and waits for each. */
    void fill(String topic, int partition, String... values) throws Exception {
        try (KafkaProducer<String, String> producer = producer(Names.of("judge-filler"), props("enable.idempotence", "true", "acks", "all"))) {
            for (String v : values) producer.send(new ProducerRecord<>(topic, partition, "k-" + v, v)).get();
        }
    }

    /**
     * Reads the partitions from the beginning to their end offsets (for this isolation level)
     * with an assigned consumer, no group: `p<partition>@<offset>=<value>` in partition, offset order.
     */
    String readAll(String topic, int partitions, String isolation) {
        try (KafkaConsumer<String, String> c = consumer(Names.of("judge-reader"), props("isolation.level", isolation))) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) tps.add(new TopicPartition(topic, i));
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            List<ConsumerRecord<String, String>> got = new ArrayList<>();
            long deadline = System.nanoTime() + PATIENCE.toNanos();
            while (!tps.stream().allMatch(tp -> c.position(tp) >= end.get(tp)) && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(got::add);
            }
            return records(got);
        }
    }

    static String records(Collection<ConsumerRecord<String, String>> records) {
        if (records.isEmpty()) return "none";
        return records.stream()
                .sorted(Comparator.<ConsumerRecord<String, String>>comparingInt(ConsumerRecord::partition).thenComparingLong(ConsumerRecord::offset))
                .map(r -> "p" + r.partition() + "@" + r.offset() + "=" + r.value())
                .collect(Collectors.joining(" "));
    }

    static String partitions(Set<TopicPartition> tps) {
        return tps.stream().sorted(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition))
                .map(tp -> tp.topic() + "-" + tp.partition()).collect(Collectors.joining(","));
    }
}
