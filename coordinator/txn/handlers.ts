/**
 * Request handlers of the transaction coordinator's APIs: they translate
 * between the generated request/response shapes (every served version) and
 * TransactionCoordinator calls.
 */
import {
  AddPartitionsToTxnResponse,
  AddShareAcksToTxnResponse,
  InitProducerIdResponse,
} from '../../generated/index.js';
import type { Handler } from '../broker-context.js';
import { CONSUMER_OFFSETS_TOPIC, SHARE_GROUP_STATE_TOPIC, type Cluster } from '../cluster.js';
import { ErrorCode } from '../errors.js';
import type { TopicPartitionRef, TransactionCoordinator } from './transaction-coordinator.js';
import { shareGroupOfVerifyTopic, TWO_PHASE_PROBE_TOPIC } from './verifier.js';

interface TopicPartitions {
  name: string;
  partitions: number[];
}

/** Errors that concern the whole transaction rather than one partition. */
function isTransactionLevel(code: number): boolean {
  return code !== ErrorCode.NONE && code !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION && code !== ErrorCode.OPERATION_NOT_ATTEMPTED;
}

/**
 * `transactionVersion` is the finalized `transaction.version` feature level:
 * at 1 every producer is treated as a classic (TV1) one, whatever request versions it sends.
 */
export function transactionHandlers(tc: TransactionCoordinator, cluster: Cluster, transactionVersion = 2): Map<number, Handler> {
  const tv2 = (fromVersion: boolean): number => (fromVersion && transactionVersion >= 2 ? 2 : 0);
  /** UNKNOWN_TOPIC_OR_PARTITION for partitions that do not exist; null when all do. */
  const unknownPartitions = (topics: TopicPartitions[]): Set<string> | null => {
    const unknown = new Set<string>();
    for (const t of topics) {
      const info = cluster.topicByName(t.name);
      for (const p of t.partitions) if (info === undefined || info.internal || p < 0 || p >= info.partitions) unknown.add(`${t.name}\u0000${p}`);
    }
    return unknown.size > 0 ? unknown : null;
  };

  /** Adds data partitions; returns per-partition results in AddPartitionsToTxn's shape. */
  const addOrVerify = async (
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    topics: TopicPartitions[],
    verifyOnly: boolean,
    clientTransactionVersion = 0,
  ): Promise<{ name: string; resultsByPartition: { partitionIndex: number; partitionErrorCode: number }[] }[]> => {
    const result = (code: (topic: string, p: number) => number) =>
      topics.map((t) => ({ name: t.name, resultsByPartition: t.partitions.map((p) => ({ partitionIndex: p, partitionErrorCode: code(t.name, p) })) }));
    if (verifyOnly) {
      return result((topic, p) => {
        const group = shareGroupOfVerifyTopic(topic);
        return group === null
          ? tc.verify(transactionalId, producerId, producerEpoch, topic, p)
          : tc.verify(transactionalId, producerId, producerEpoch, SHARE_GROUP_STATE_TOPIC, p, group);
      });
    }
    const unknown = unknownPartitions(topics);
    if (unknown !== null) {
      return result((topic, p) => (unknown.has(`${topic}\u0000${p}`) ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.OPERATION_NOT_ATTEMPTED));
    }
    const refs: TopicPartitionRef[] = topics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.name, partition })));
    const code = await tc.addPartitions(transactionalId, producerId, producerEpoch, refs, clientTransactionVersion);
    return result(() => code);
  };

  const handlers = new Map<number, Handler>();

  handlers.set(22, async (req) => {
    const result = await tc.initProducerId(
      req.transactionalId,
      req.transactionTimeoutMs,
      { producerId: req.producerId, producerEpoch: req.producerEpoch },
      { enable2Pc: req.enable2Pc, keepPreparedTxn: req.keepPreparedTxn },
    );
    return InitProducerIdResponse.create(result);
  });

  handlers.set(24, async (req, ctx) => {
    if (ctx.apiVersion <= 3) {
      const results = await addOrVerify(req.v3AndBelowTransactionalId, req.v3AndBelowProducerId, req.v3AndBelowProducerEpoch, req.v3AndBelowTopics, false);
      return AddPartitionsToTxnResponse.create({ resultsByTopicV3AndBelow: results });
    }
    // v4+: the batched, broker-to-broker form (KIP-890): several transactions, optionally verify-only.
    const resultsByTransaction = [];
    // v5+ comes from a partition leader adding a partition for a TV2 producer (Produce v12+, TxnOffsetCommit v5+).
    const clientTransactionVersion = tv2(ctx.apiVersion >= 5);
    for (const txn of req.transactions) {
      // A kipgen leader's probe (verifier.ts) is answered apart: it is no partition to add or verify.
      const probed = txn.topics.some((t: TopicPartitions) => t.name === TWO_PHASE_PROBE_TOPIC);
      const topics = probed ? txn.topics.filter((t: TopicPartitions) => t.name !== TWO_PHASE_PROBE_TOPIC) : txn.topics;
      const topicResults = await addOrVerify(txn.transactionalId, txn.producerId, txn.producerEpoch, topics, txn.verifyOnly, clientTransactionVersion);
      if (probed) {
        const code = tc.isTwoPhaseTransaction(txn.transactionalId) ? ErrorCode.NONE : ErrorCode.OPERATION_NOT_ATTEMPTED;
        topicResults.push({ name: TWO_PHASE_PROBE_TOPIC, resultsByPartition: [{ partitionIndex: 0, partitionErrorCode: code }] });
      }
      resultsByTransaction.push({ transactionalId: txn.transactionalId, topicResults });
    }
    return AddPartitionsToTxnResponse.create({ errorCode: ErrorCode.NONE, resultsByTransaction });
  });

  // AddShareAcksToTxn (KIP-1289): add the __share_group_state partition that holds the share
  // state of each {group, topic, partition}: the one led by the data partition's leader (DESIGN §6).
  handlers.set(95, async (req) => {
    const topics: TopicPartitions[] = req.topics;
    const unknown = unknownPartitions(topics);
    const shareStatePartitions = new Set<number>();
    for (const t of topics) for (const p of t.partitions) if (!unknown?.has(`${t.name}\u0000${p}`)) shareStatePartitions.add(cluster.shareStatePartitionFor(t.name, p));
    let code: number = ErrorCode.NONE;
    if (req.groupId === '') code = ErrorCode.INVALID_GROUP_ID;
    else if (unknown === null && shareStatePartitions.size > 0) {
      code = await tc.addPartitions(
        req.transactionalId,
        req.producerId,
        req.producerEpoch,
        [...shareStatePartitions].map((partition) => ({ topic: SHARE_GROUP_STATE_TOPIC, partition })),
        0,
        req.groupId,
      );
    }
    const partitionCode = (name: string, p: number): number => {
      if (unknown !== null) return unknown.has(`${name}\u0000${p}`) ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.OPERATION_NOT_ATTEMPTED;
      return code;
    };
    return AddShareAcksToTxnResponse.create({
      errorCode: isTransactionLevel(code) ? code : ErrorCode.NONE,
      results: topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p, partitionErrorCode: partitionCode(t.name, p) })) })),
    });
  });

  return handlers;
}
