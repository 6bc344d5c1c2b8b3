package dev.kipgen.bench;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Kafka's own Java clients as the peers of bench/kafka.bench.ts: the same loops
 * the bench runs with our client, timed inside this JVM, one JSON line out.
 *
 *   topic <bootstrap> <topic> <partitions>                      create a topic
 *   group-earliest <bootstrap> <group>                          share.auto.offset.reset=earliest for a share group
 *   produce <bootstrap> <topic> <records> <size> <window> <txn> records of <size> bytes, at most <window> unacknowledged;
 *                                                               txn > 0: transactions of <txn> records
 *   share-consume <bootstrap> <topic> <group> <records>         explicit acknowledgement, commitSync per poll
 */
public final class ClientBench {
  public static void main(String[] args) throws Exception {
    switch (args[0]) {
      case "topic" -> topic(args[1], args[2], Integer.parseInt(args[3]));
      case "group-earliest" -> groupEarliest(args[1], args[2]);
      case "produce" -> produce(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]), Integer.parseInt(args[5]), Integer.parseInt(args[6]));
      case "share-consume" -> shareConsume(args[1], args[2], args[3], Integer.parseInt(args[4]));
      default -> throw new IllegalArgumentException("unknown mode " + args[0]);
    }
  }

  private static Admin admin(String bootstrap) {
    Properties props = new Properties();
    props.put("bootstrap.servers", bootstrap);
    return Admin.create(props);
  }

  private static void topic(String bootstrap, String topic, int partitions) throws Exception {
    try (Admin admin = admin(bootstrap)) {
      admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
    }
    System.out.println("{\"created\":\"" + topic + "\"}");
  }

  private static void groupEarliest(String bootstrap, String group) throws Exception {
    try (Admin admin = admin(bootstrap)) {
      ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
      AlterConfigOp op = new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET);
      admin.incrementalAlterConfigs(Map.of(resource, List.of(op))).all().get();
    }
    System.out.println("{\"group\":\"" + group + "\"}");
  }

  private static void produce(String bootstrap, String topic, int records, int size, int window, int perTxn) throws Exception {
    Properties props = new Properties();
    props.put("bootstrap.servers", bootstrap);
    props.put("acks", "all");
    props.put("enable.idempotence", "true");
    props.put("key.serializer", ByteArraySerializer.class.getName());
    props.put("value.serializer", ByteArraySerializer.class.getName());
    if (perTxn > 0) props.put("transactional.id", "bench-java-" + topic);
    byte[] value = new byte[size];
    Arrays.fill(value, (byte) 'x');
    long[] latencies = new long[records];
    long[] commits = new long[perTxn > 0 ? (records + perTxn - 1) / perTxn : 0];
    Semaphore inFlight = new Semaphore(window);
    AtomicReference<Exception> failure = new AtomicReference<>();
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
      if (perTxn > 0) producer.initTransactions();
      long began = System.nanoTime();
      for (int i = 0; i < records; i++) {
        if (perTxn > 0 && i % perTxn == 0) producer.beginTransaction();
        inFlight.acquire();
        final int index = i;
        final long sent = System.nanoTime();
        producer.send(new ProducerRecord<>(topic, null, value), (metadata, error) -> {
          latencies[index] = System.nanoTime() - sent;
          if (error != null) failure.compareAndSet(null, error);
          inFlight.release();
        });
        if (perTxn > 0 && (i + 1 == records || (i + 1) % perTxn == 0)) {
          long commitBegan = System.nanoTime();
          producer.commitTransaction();
          commits[i / perTxn] = System.nanoTime() - commitBegan;
        }
      }
      producer.flush();
      long elapsed = System.nanoTime() - began;
      if (failure.get() != null) throw failure.get();
      System.out.println(result(records, elapsed, perTxn > 0 ? commits : latencies));
    }
  }

  private static void shareConsume(String bootstrap, String topic, String group, int records) {
    Properties props = new Properties();
    props.put("bootstrap.servers", bootstrap);
    props.put("group.id", group);
    props.put("share.acknowledgement.mode", "explicit");
    props.put("key.deserializer", ByteArrayDeserializer.class.getName());
    props.put("value.deserializer", ByteArrayDeserializer.class.getName());
    long[] commits = new long[records + 1];
    int polls = 0;
    int seen = 0;
    try (KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(props)) {
      consumer.subscribe(List.of(topic));
      long began = 0;
      while (seen < records) {
        ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(500));
        if (batch.isEmpty()) continue;
        if (began == 0) began = System.nanoTime();
        for (ConsumerRecord<byte[], byte[]> record : batch) consumer.acknowledge(record, AcknowledgeType.ACCEPT);
        long commitBegan = System.nanoTime();
        consumer.commitSync();
        commits[polls++] = System.nanoTime() - commitBegan;
        seen += batch.count();
      }
      System.out.println(result(seen, System.nanoTime() - began, Arrays.copyOf(commits, polls)));
    }
  }

  /** records, seconds, and the median and 99th percentile of `samples` in milliseconds. */
  private static String result(int records, long elapsedNanos, long[] samples) {
    long[] sorted = samples.clone();
    Arrays.sort(sorted);
    return String.format(
        "{\"records\":%d,\"seconds\":%.4f,\"p50Ms\":%.3f,\"p99Ms\":%.3f}",
        records,
        elapsedNanos / 1e9,
        percentile(sorted, 0.50) / 1e6,
        percentile(sorted, 0.99) / 1e6);
  }

  private static double percentile(long[] sorted, double p) {
    if (sorted.length == 0) return Double.NaN;
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
  }
}
