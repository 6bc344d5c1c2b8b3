/**
 * AddPartitionsToTxn (key 24): adds data partitions to a producer's transaction
 * (starting it if needed), or, from a partition leader, verifies that they are in it.
 *
 * Kafka: KafkaApis.handleAddPartitionsToTxnRequest,
 * TransactionCoordinator.handleAddPartitionsToTransaction / handleVerifyPartitionsInTransaction.
 * - v0-3: the client form, one transaction.
 * - v4+: the batched broker-to-broker form (KIP-890): several transactions,
 *   optionally verify-only. v5+ comes from a partition leader adding a partition for
 *   a Transactions V2 producer (Produce v12+, TxnOffsetCommit v5+); at
 *   transaction.version 1 every producer is treated as V1.
 * - A partition that does not exist (or is internal) is UNKNOWN_TOPIC_OR_PARTITION
 *   and the others OPERATION_NOT_ATTEMPTED, nothing added (as Kafka).
 * - kipgen only: a verify-only entry may name a share group's verification topic
 *   (txn/verifier.ts, shareGroupOfVerifyTopic: the __share_group_state partition of
 *   that group), and a leader's two-phase probe (TWO_PHASE_PROBE_TOPIC) is answered
 *   apart, NONE when the transaction is a 2PC one.
 * Rule: v0-3 from clients: WRITE on the transactional id and on each topic, every
 * partition answered (TRANSACTIONAL_ID_ / TOPIC_AUTHORIZATION_FAILED, the others
 * OPERATION_NOT_ATTEMPTED) when one is denied; v4+ from brokers: CLUSTER_ACTION.
 */
import { AddPartitionsToTxnRequest, type AddPartitionsToTxnTopic } from '../../generated/AddPartitionsToTxnRequest.js';
import {
  AddPartitionsToTxnResponse,
  type AddPartitionsToTxnResultInit,
  type AddPartitionsToTxnTopicResultInit,
} from '../../generated/AddPartitionsToTxnResponse.js';
import { AclOperation as Op, CLUSTER_NAME, ResourceType as Res } from '../auth/acl.js';
import { requirePermission } from '../auth/rule-kit.js';
import { SHARE_GROUP_STATE_TOPIC } from '../cluster.js';
import { ErrorCode } from '../errors.js';
import { partitionKey, unknownPartitions, type TopicPartitions } from '../txn/partition-additions.js';
import type { TopicPartitionRef } from '../txn/transaction-coordinator.js';
import { shareGroupOfVerifyTopic, TWO_PHASE_PROBE_TOPIC } from '../txn/verifier.js';
import { defineApi } from './define.js';

/** The first version of the batched broker-to-broker form (KIP-890). */
const FIRST_BROKER_VERSION = 4;
/** The first version a leader sends for a Transactions V2 producer. */
const FIRST_TV2_VERSION = 5;

export default defineApi({
  request: AddPartitionsToTxnRequest,
  response: AddPartitionsToTxnResponse,
  authorize: async (request, check, ctx, next) => {
    if (ctx.apiVersion >= FIRST_BROKER_VERSION) {
      requirePermission(check, Res.CLUSTER, CLUSTER_NAME, Op.CLUSTER_ACTION, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      return next(request);
    }
    const txnAllowed = check.allow(Res.TRANSACTIONAL_ID, request.v3AndBelowTransactionalId, Op.WRITE);
    const deniedTopics = new Set(request.v3AndBelowTopics.filter((t) => !check.allow(Res.TOPIC, t.name, Op.WRITE)).map((t) => t.name));
    if (txnAllowed && deniedTopics.size === 0) return next(request);
    const code = (t: AddPartitionsToTxnTopic): number =>
      !txnAllowed
        ? ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        : deniedTopics.has(t.name)
          ? ErrorCode.TOPIC_AUTHORIZATION_FAILED
          : ErrorCode.OPERATION_NOT_ATTEMPTED;
    return AddPartitionsToTxnResponse.create({
      resultsByTopicV3AndBelow: request.v3AndBelowTopics.map((t) => ({
        name: t.name,
        resultsByPartition: t.partitions.map((p) => ({ partitionIndex: p, partitionErrorCode: code(t) })),
      })),
    });
  },
  handler: ({ cluster, config, transactions }) => {
    /** Adds data partitions, or verifies them; per-partition results in AddPartitionsToTxn's shape. */
    const addOrVerify = async (
      transactionalId: string,
      producerId: bigint,
      producerEpoch: number,
      topics: readonly TopicPartitions[],
      verifyOnly: boolean,
      clientTransactionVersion = 0,
    ): Promise<AddPartitionsToTxnTopicResultInit[]> => {
      const result = (code: (topic: string, p: number) => number): AddPartitionsToTxnTopicResultInit[] =>
        topics.map((t) => ({ name: t.name, resultsByPartition: t.partitions.map((p) => ({ partitionIndex: p, partitionErrorCode: code(t.name, p) })) }));
      if (verifyOnly) {
        return result((topic, p) => {
          const group = shareGroupOfVerifyTopic(topic);
          return group === null
            ? transactions.verify(transactionalId, producerId, producerEpoch, topic, p)
            : transactions.verify(transactionalId, producerId, producerEpoch, SHARE_GROUP_STATE_TOPIC, p, group);
        });
      }
      const unknown = unknownPartitions(cluster, topics);
      if (unknown !== null) {
        return result((topic, p) => (unknown.has(partitionKey(topic, p)) ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.OPERATION_NOT_ATTEMPTED));
      }
      const refs: TopicPartitionRef[] = topics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.name, partition })));
      const code = await transactions.addPartitions(transactionalId, producerId, producerEpoch, refs, clientTransactionVersion);
      return result(() => code);
    };

    return async (request, ctx) => {
      if (ctx.apiVersion < FIRST_BROKER_VERSION) {
        const results = await addOrVerify(
          request.v3AndBelowTransactionalId,
          request.v3AndBelowProducerId,
          request.v3AndBelowProducerEpoch,
          request.v3AndBelowTopics,
          false,
        );
        return AddPartitionsToTxnResponse.create({ resultsByTopicV3AndBelow: results });
      }
      const resultsByTransaction: AddPartitionsToTxnResultInit[] = [];
      const clientTransactionVersion = ctx.apiVersion >= FIRST_TV2_VERSION && config.transactionVersion >= 2 ? 2 : 0;
      for (const txn of request.transactions) {
        // A kipgen leader's probe (verifier.ts) is answered apart: it is no partition to add or verify.
        const probed = txn.topics.some((t) => t.name === TWO_PHASE_PROBE_TOPIC);
        const topics = probed ? txn.topics.filter((t) => t.name !== TWO_PHASE_PROBE_TOPIC) : txn.topics;
        const topicResults = await addOrVerify(txn.transactionalId, txn.producerId, txn.producerEpoch, topics, txn.verifyOnly, clientTransactionVersion);
        if (probed) {
          const code = transactions.isTwoPhaseTransaction(txn.transactionalId) ? ErrorCode.NONE : ErrorCode.OPERATION_NOT_ATTEMPTED;
          topicResults.push({ name: TWO_PHASE_PROBE_TOPIC, resultsByPartition: [{ partitionIndex: 0, partitionErrorCode: code }] });
        }
        resultsByTransaction.push({ transactionalId: txn.transactionalId, topicResults });
      }
      return AddPartitionsToTxnResponse.create({ errorCode: ErrorCode.NONE, resultsByTransaction });
    };
  },
});
