package dev.kipgen.judge;

import java.lang.reflect.Field;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.internals.Sender;
import org.apache.kafka.clients.producer.internals.TransactionManager;
import org.apache.kafka.clients.producer.internals.TransactionalRequestResult;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.utils.internals.ProducerIdAndEpoch;

/**
 * KIP-939's producer calls — initTransactions(keepPreparedTxn), prepareTransaction(),
 * completeTransaction(PreparedTxnState) — as Kafka trunk's KafkaProducer makes them.
 * kafka-clients 4.4.0 has the machinery (TransactionManager.initializeTransactions(boolean),
 * prepareTransaction(), preparedTransactionState(), the transaction.two.phase.commit.enable
 * config and the InitProducerId fields) but not yet these public KafkaProducer methods, so
 * this class reaches the producer's TransactionManager and Sender by reflection and follows
 * the steps of trunk's KafkaProducer.initTransactions(boolean), prepareTransaction() and
 * completeTransaction(PreparedTxnState). What goes on the wire is the 4.4 client's own.
 *
 * And that wire is where 2PC stops in 4.4: InitProducerId v6, the version with Enable2Pc and
 * KeepPreparedTxn, is marked latestVersionUnstable, and InitProducerIdRequest.Builder asks for
 * ApiKeys.INIT_PRODUCER_ID without unstable versions, so the client sends v5 — which has neither
 * field — even to a broker that advertises v6. The broker therefore sees a plain transactional
 * producer: a "prepared" transaction is aborted by the next producer's InitProducerId, and the
 * recovering producer finds nothing prepared. The scenario records exactly that, on both brokers.
 */
final class TwoPhase {
    /** PreparedTxnState's content (its (long, short) constructor is package-private in 4.4.0). */
    record State(long producerId, short epoch) {}

    private TwoPhase() {}

    private static Object field(KafkaProducer<?, ?> p, String name) throws ReflectiveOperationException {
        Field f = KafkaProducer.class.getDeclaredField(name);
        f.setAccessible(true);
        return f.get(p);
    }

    private static TransactionManager tm(KafkaProducer<?, ?> p) throws ReflectiveOperationException {
        return (TransactionManager) field(p, "transactionManager");
    }

    static void initTransactions(KafkaProducer<?, ?> p, boolean keepPreparedTxn) throws ReflectiveOperationException {
        TransactionManager tm = tm(p);
        if (tm.isPrepared()) throw new IllegalStateException("a transaction is prepared");
        TransactionalRequestResult result = tm.initializeTransactions(keepPreparedTxn);
        ((Sender) field(p, "sender")).wakeup();
        result.await(30_000, TimeUnit.MILLISECONDS, "initTransactions");
        tm.maybeUpdateTransactionV2Enabled(true);
    }

    static State prepareTransaction(KafkaProducer<?, ?> p) throws ReflectiveOperationException {
        TransactionManager tm = tm(p);
        if (tm.isPrepared()) throw new IllegalStateException("a transaction is prepared");
        if (!tm.is2PCEnabled()) throw new InvalidTxnStateException("2PC is not enabled");
        p.flush();
        tm.prepareTransaction();
        return preparedState(p);
    }

    static boolean isPrepared(KafkaProducer<?, ?> p) throws ReflectiveOperationException {
        return tm(p).isPrepared();
    }

    static State preparedState(KafkaProducer<?, ?> p) throws ReflectiveOperationException {
        ProducerIdAndEpoch s = tm(p).preparedTransactionState();
        return s == null ? null : new State(s.producerId, s.epoch);
    }

    /** Commits when the given state is the prepared transaction's, aborts otherwise; says which. */
    static String completeTransaction(KafkaProducer<?, ?> p, State expected) throws ReflectiveOperationException {
        if (!isPrepared(p)) throw new InvalidTxnStateException("no transaction is prepared");
        if (preparedState(p).equals(expected)) {
            p.commitTransaction();
            return "committed";
        }
        p.abortTransaction();
        return "aborted";
    }
}
