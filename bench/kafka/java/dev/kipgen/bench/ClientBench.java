package dev.kipgen.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
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
 *   seed <bootstrap> <topic> <records>                          records numbered as bench:txn's input (key = value = in-000000 …)
 *   ctp <bootstrap> <input> <output> <group> <records> <batch> <eos> <warmups>
 *                                                               consume-transform-produce with a classic consumer, <batch> records
 *                                                               per poll; eos 0: at-least-once, eos 1: exactly-once; after
 *                                                               <warmups> untimed passes in this JVM, each with its own group
 */
public final class ClientBench {
  public static void main(String[] args) throws Exception {
    switch (args[0]) {
      case "topic" -> topic(args[1], args[2], Integer.parseInt(args[3]));
      case "group-earliest" -> groupEarliest(args[1], args[2]);
      case "produce" -> produce(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]), Integer.parseInt(args[5]), Integer.parseInt(args[6]));
      case "share-consume" -> shareConsume(args[1], args[2], args[3], Integer.parseInt(args[4]));
      case "seed" -> seed(args[1], args[2], Integer.parseInt(args[3]));
      case "ctp" -> {
        // Each run is a fresh JVM, while our client runs in the bench's warmed process: untimed passes first, so
        // that the timed one runs the clients' code compiled rather than interpreted.
        boolean eos = args[7].equals("1");
        for (int pass = 1; pass <= Integer.parseInt(args[8]); pass++)
          consumeTransformProduce(args[1], args[2], args[3], args[4] + "-jvm-warmup-" + pass, Integer.parseInt(args[5]), Integer.parseInt(args[6]), eos);
        System.out.println(consumeTransformProduce(args[1], args[2], args[3], args[4], Integer.parseInt(args[5]), Integer.parseInt(args[6]), eos));
      }
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

  /** The input bench:txn seeds (chaos/seed.ts): record i has key and value "in-" + i in six digits, so the records are the same size. */
  private static void seed(String bootstrap, String topic, int records) throws Exception {
    Properties props = new Properties();
    props.put("bootstrap.servers", bootstrap);
    props.put("acks", "all");
    props.put("key.serializer", ByteArraySerializer.class.getName());
    props.put("value.serializer", ByteArraySerializer.class.getName());
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
      List<Future<RecordMetadata>> sends = new ArrayList<>(records);
      for (int i = 0; i < records; i++) {
        byte[] bytes = String.format("in-%06d", i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        sends.add(producer.send(new ProducerRecord<>(topic, bytes, bytes)));
      }
      for (Future<RecordMetadata> send : sends) send.get();
    }
    System.out.println("{\"seeded\":" + records + "}");
  }

  /**
   * bench:txn's consume-transform-produce loop (its explicit-ctp and transactional-ctp modes) with Kafka's own
   * clients and Kafka's own exactly-once: a classic-protocol KafkaConsumer in place of the share consumer, offsets
   * in place of acknowledgements. The exactly-once loop is the one Kafka's examples run
   * (examples/…/ExactlyOnceMessageProcessor.java: beginTransaction, the sends, sendOffsetsToTransaction with the
   * consumer's group metadata, commitTransaction; the consumer reads read_committed). The at-least-once loop awaits
   * its sends before commitSync, so that a committed offset never covers an output that was not written. As in
   * bench:txn: the transform is the identity (key and value copied), linger.ms 0, fetch.max.wait.ms 100, the first
   * batch is fetched before the clock starts (group join), and the latency sample is the commit (exactly-once:
   * sendOffsetsToTransaction + commitTransaction; at-least-once: awaiting the sends + commitSync).
   */
  private static String consumeTransformProduce(String bootstrap, String input, String output, String group, int records, int batch, boolean eos)
      throws Exception {
    Properties consumerProps = new Properties();
    consumerProps.put("bootstrap.servers", bootstrap);
    consumerProps.put("group.id", group);
    consumerProps.put("group.protocol", "classic");
    consumerProps.put("enable.auto.commit", "false");
    consumerProps.put("auto.offset.reset", "earliest");
    consumerProps.put("max.poll.records", Integer.toString(batch));
    consumerProps.put("fetch.max.wait.ms", "100");
    if (eos) consumerProps.put("isolation.level", "read_committed");
    consumerProps.put("key.deserializer", ByteArrayDeserializer.class.getName());
    consumerProps.put("value.deserializer", ByteArrayDeserializer.class.getName());
    Properties producerProps = new Properties();
    producerProps.put("bootstrap.servers", bootstrap);
    producerProps.put("acks", "all");
    producerProps.put("enable.idempotence", "true");
    producerProps.put("linger.ms", "0");
    if (eos) producerProps.put("transactional.id", "bench-eos-" + group);
    producerProps.put("key.serializer", ByteArraySerializer.class.getName());
    producerProps.put("value.serializer", ByteArraySerializer.class.getName());
    long[] commits = new long[records + 1];
    int polls = 0;
    int done = 0;
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps);
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps)) {
      if (eos) producer.initTransactions();
      consumer.subscribe(List.of(input));
      ConsumerRecords<byte[], byte[]> pending = ConsumerRecords.empty();
      long warmDeadline = System.nanoTime() + 60_000_000_000L;
      while (pending.isEmpty() && System.nanoTime() < warmDeadline) pending = consumer.poll(Duration.ofMillis(200));
      long began = System.nanoTime();
      long limit = began + 300_000_000_000L;
      while (done < records && System.nanoTime() < limit) {
        ConsumerRecords<byte[], byte[]> batchRecords = pending.isEmpty() ? consumer.poll(Duration.ofMillis(200)) : pending;
        pending = ConsumerRecords.empty();
        if (batchRecords.isEmpty()) continue;
        long sendsBegan = System.nanoTime();
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (TopicPartition partition : batchRecords.partitions()) {
          List<ConsumerRecord<byte[], byte[]>> own = batchRecords.records(partition);
          offsets.put(partition, new OffsetAndMetadata(own.get(own.size() - 1).offset() + 1));
        }
        if (eos) {
          producer.beginTransaction();
          for (ConsumerRecord<byte[], byte[]> record : batchRecords) producer.send(new ProducerRecord<>(output, record.key(), record.value()));
          long commitBegan = System.nanoTime();
          producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
          producer.commitTransaction();
          commits[polls++] = System.nanoTime() - commitBegan;
        } else {
          List<Future<RecordMetadata>> sends = new ArrayList<>(batchRecords.count());
          for (ConsumerRecord<byte[], byte[]> record : batchRecords) sends.add(producer.send(new ProducerRecord<>(output, record.key(), record.value())));
          for (Future<RecordMetadata> send : sends) send.get();
          consumer.commitSync(offsets);
          commits[polls++] = System.nanoTime() - sendsBegan;
        }
        done += batchRecords.count();
      }
      long elapsed = System.nanoTime() - began;
      if (done < records) throw new IllegalStateException("ctp: " + done + " of " + records + " records of " + input + " in five minutes");
      return result(done, elapsed, Arrays.copyOf(commits, polls));
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
