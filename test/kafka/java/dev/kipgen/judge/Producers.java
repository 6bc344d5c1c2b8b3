package dev.kipgen.judge;

import java.time.Duration;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/** KafkaProducer scenarios: idempotent, transactional (TV2), two-phase commit (KIP-939). */
final class Producers {
    private final Clients clients;

    Producers(Clients clients) {
        this.clients = clients;
    }

    static String sent(RecordMetadata m) {
        return "p" + m.partition() + " offset=" + m.offset();
    }

    /** An idempotent producer: offsets per partition, then the records read back. */
    void idempotent(Out out) throws Exception {
        String topic = Names.of("judge-idempotent");
        try (Admin admin = clients.admin()) {
            Clients.createTopic(admin, topic, 2);
        }
        try (KafkaProducer<String, String> p = clients.producer(Names.of("judge-idempotent"), Clients.props("enable.idempotence", "true", "acks", "all", "max.in.flight.requests.per.connection", "5"))) {
            for (int i = 0; i < 3; i++) {
                String v = "a" + i;
                out.step("send " + v, () -> sent(p.send(new ProducerRecord<>(topic, 0, "k", v)).get()));
            }
            for (int i = 0; i < 2; i++) {
                String v = "b" + i;
                out.step("send " + v, () -> sent(p.send(new ProducerRecord<>(topic, 1, "k", v)).get()));
            }
            out.step("flush", () -> {
                p.flush();
                return null;
            });
        }
        out.step("read", () -> clients.readAll(topic, 2, "read_uncommitted"));
    }

    /**
     * A transactional producer (Transactions V2 where the broker finalizes transaction.version=2):
     * commit, abort, commit; read back with read_committed and read_uncommitted.
     */
    void transactional(Out out) throws Exception {
        String topic = Names.of("judge-transactional");
        try (Admin admin = clients.admin()) {
            Clients.createTopic(admin, topic, 1);
        }
        try (KafkaProducer<String, String> p = clients.producer(Names.of("judge-txn"), Clients.props("transactional.id", Names.of("judge-txn")))) {
            out.step("init", () -> {
                p.initTransactions();
                return null;
            });
            transaction(out, p, topic, "commit", "c0", "c1");
            transaction(out, p, topic, "abort", "x0");
            transaction(out, p, topic, "commit", "c2");
            out.step("commit-without-begin", () -> {
                p.commitTransaction();
                return null;
            });
        }
        out.step("read read_committed", () -> clients.readAll(topic, 1, "read_committed"));
        out.step("read read_uncommitted", () -> clients.readAll(topic, 1, "read_uncommitted"));
        // A second producer with the same id fences the first and finds nothing open.
        try (KafkaProducer<String, String> p = clients.producer(Names.of("judge-txn-2"), Clients.props("transactional.id", Names.of("judge-txn")))) {
            out.step("init again", () -> {
                p.initTransactions();
                return null;
            });
            transaction(out, p, topic, "commit", "c3");
        }
        out.step("read again", () -> clients.readAll(topic, 1, "read_committed"));
    }

    /**
     * Fencing: a second producer with the same transactional.id aborts the first one's open
     * transaction and fences it; what the first one then gets from send and commit.
     */
    void fencing(Out out) throws Exception {
        String topic = Names.of("judge-fencing");
        try (Admin admin = clients.admin()) {
            Clients.createTopic(admin, topic, 1);
        }
        var config = Clients.props("transactional.id", Names.of("judge-fence"));
        KafkaProducer<String, String> first = clients.producer(Names.of("judge-fence-1"), config);
        try (KafkaProducer<String, String> second = clients.producer(Names.of("judge-fence-2"), config)) {
            out.step("first init", () -> {
                first.initTransactions();
                first.beginTransaction();
                return sent(first.send(new ProducerRecord<>(topic, 0, "k", "f0")).get());
            });
            out.step("second init", () -> {
                second.initTransactions();
                return null;
            });
            out.step("first send after fencing", () -> sent(first.send(new ProducerRecord<>(topic, 0, "k", "f1")).get()));
            out.step("first commit after fencing", () -> {
                first.commitTransaction();
                return null;
            });
            out.step("first begin after fencing", () -> {
                first.beginTransaction();
                return null;
            });
            transaction(out, second, topic, "commit", "f2");
            out.step("read", () -> clients.readAll(topic, 1, "read_committed"));
            out.step("read read_uncommitted", () -> clients.readAll(topic, 1, "read_uncommitted"));
        } finally {
            first.close(Duration.ZERO);
        }
    }

    /**
     * Consume-transform-produce: offsets committed inside the transaction with
     * sendOffsetsToTransaction are the group's only when the transaction commits.
     */
    void offsetsInTransaction(Out out) throws Exception {
        String in = Names.of("judge-eos-in");
        String outTopic = Names.of("judge-eos-out");
        String group = Names.of("judge-eos");
        try (Admin admin = clients.admin()) {
            Clients.createTopic(admin, in, 1);
            Clients.createTopic(admin, outTopic, 1);
        }
        clients.fill(in, 0, "i0", "i1", "i2");
        org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition(in, 0);
        try (KafkaProducer<String, String> p = clients.producer(Names.of("judge-eos"), Clients.props("transactional.id", Names.of("judge-eos")));
                var c = clients.consumer(Names.of("judge-eos"), Clients.props("group.id", group, "isolation.level", "read_committed"))) {
            p.initTransactions();
            c.subscribe(java.util.List.of(in));
            var records = Consumers.pollUntil(c, 3);
            out.step("poll", () -> Clients.records(records));
            for (String end : java.util.List.of("commit", "abort")) {
                out.step(end + " transform", () -> {
                    p.beginTransaction();
                    for (var r : records) p.send(new ProducerRecord<>(outTopic, 0, r.key(), r.value().toUpperCase() + "-" + end));
                    long next = end.equals("commit") ? 3 : 1;
                    p.sendOffsetsToTransaction(java.util.Map.of(tp, new org.apache.kafka.clients.consumer.OffsetAndMetadata(next)), c.groupMetadata());
                    if (end.equals("commit")) p.commitTransaction();
                    else p.abortTransaction();
                    return null;
                });
                out.step(end + " committed", () -> Consumers.committed(c.committed(java.util.Set.of(tp))));
            }
            out.step("sendOffsets outside a transaction", () -> {
                p.sendOffsetsToTransaction(java.util.Map.of(tp, new org.apache.kafka.clients.consumer.OffsetAndMetadata(0)), c.groupMetadata());
                return null;
            });
        }
        out.step("read output", () -> clients.readAll(outTopic, 1, "read_committed"));
    }

    static void transaction(Out out, KafkaProducer<String, String> p, String topic, String end, String... values) {
        String label = end + " " + String.join(",", values);
        out.step(label + " begin", () -> {
            p.beginTransaction();
            return null;
        });
        for (String v : values) out.step(label + " send " + v, () -> sent(p.send(new ProducerRecord<>(topic, 0, "k", v)).get()));
        out.step(label + " " + end, () -> {
            if (end.equals("commit")) p.commitTransaction();
            else p.abortTransaction();
            return null;
        });
    }

    /**
     * KIP-939 two-phase commit: a producer prepares, a second producer with the same
     * transactional.id recovers the prepared transaction (initTransactions(true)) and
     * completes it, committing when the state matches and aborting when it does not;
     * a plain initTransactions() aborts a prepared transaction.
     */
    void twoPhase(Out out) throws Exception {
        String topic = Names.of("judge-2pc");
        try (Admin admin = clients.admin()) {
            Clients.createTopic(admin, topic, 1);
        }
        String id = Names.of("judge-2pc");
        var twoPc = Clients.props("transactional.id", id, "transaction.two.phase.commit.enable", "true");

        // Round 1: prepared, recovered, completed with the matching state: committed.
        TwoPhase.State prepared = prepare(out, "round1", twoPc, topic, "t0");
        try (KafkaProducer<String, String> p = clients.producer(Names.of("judge-2pc-r1b"), twoPc)) {
            out.step("round1 recover", () -> {
                TwoPhase.initTransactions(p, true);
                return "prepared=" + TwoPhase.isPrepared(p) + " same=" + (prepared != null && prepared.equals(TwoPhase.preparedState(p)));
            });
            out.step("round1 complete", () -> TwoPhase.completeTransaction(p, prepared));
        }
        out.step("round1 read", () -> clients.readAll(topic, 1, "read_committed"));

        // Round 2: completed with a state that is not the prepared one: aborted.
        prepare(out, "round2", twoPc, topic, "t1");
        try (KafkaProducer<String, String> p = clients.producer(Names.of("judge-2pc-r2b"), twoPc)) {
            out.step("round2 recover", () -> {
                TwoPhase.initTransactions(p, true);
                return "prepared=" + TwoPhase.isPrepared(p);
            });
            out.step("round2 complete", () -> TwoPhase.completeTransaction(p, new TwoPhase.State(-1, (short) -1)));
        }
        out.step("round2 read", () -> clients.readAll(topic, 1, "read_committed"));

        // Round 3: a prepared transaction met by initTransactions(false) is aborted.
        prepare(out, "round3", twoPc, topic, "t2");
        try (KafkaProducer<String, String> p = clients.producer(Names.of("judge-2pc-r3b"), twoPc)) {
            out.step("round3 init without keep", () -> {
                TwoPhase.initTransactions(p, false);
                return "prepared=" + TwoPhase.isPrepared(p);
            });
            transaction(out, p, topic, "commit", "t3");
        }
        out.step("round3 read", () -> clients.readAll(topic, 1, "read_committed"));

        // Recovering with keepPreparedTxn when nothing is prepared.
        try (KafkaProducer<String, String> p = clients.producer(Names.of("judge-2pc-r4"), twoPc)) {
            out.step("idle recover", () -> {
                TwoPhase.initTransactions(p, true);
                return "prepared=" + TwoPhase.isPrepared(p);
            });
        }
        // keepPreparedTxn without 2PC is refused by the client before it asks the broker; without the
        // 2PC flag a producer of this id is a plain transactional producer.
        try (KafkaProducer<String, String> p = clients.producer(Names.of("judge-2pc-plain"), Clients.props("transactional.id", Names.of("judge-2pc-plain")))) {
            out.step("plain prepare", () -> {
                p.initTransactions();
                p.beginTransaction();
                p.send(new ProducerRecord<>(topic, 0, "k", "u0")).get();
                TwoPhase.prepareTransaction(p);
                return null;
            });
        }
    }

    /** Begins, sends and prepares in a producer that is then closed without completing. */
    private TwoPhase.State prepare(Out out, String round, java.util.Properties config, String topic, String value) {
        TwoPhase.State[] state = new TwoPhase.State[1];
        KafkaProducer<String, String> p = clients.producer(Names.of("judge-2pc-") + round + "a", config);
        try {
            out.step(round + " init", () -> {
                TwoPhase.initTransactions(p, false);
                return null;
            });
            out.step(round + " send " + value, () -> {
                p.beginTransaction();
                return sent(p.send(new ProducerRecord<>(topic, 0, "k", value)).get());
            });
            out.step(round + " prepare", () -> {
                state[0] = TwoPhase.prepareTransaction(p);
                return "prepared=" + TwoPhase.isPrepared(p);
            });
            out.step(round + " read while prepared", () -> clients.readAll(topic, 1, "read_committed"));
        } finally {
            // A graceful close aborts an open (even a prepared) transaction (Sender.run); closing
            // at once leaves it prepared, as a crash of the application would.
            p.close(Duration.ZERO);
        }
        return state[0];
    }
}
