/**
 * AddShareAcksToTxn (key 95, KIP-1289): a transactional producer about to send
 * share acknowledgements (TxnShareAcknowledge) adds, for each {group, topic,
 * partition}, the __share_group_state partition holding its share state to the
 * transaction: the one led by the data partition's leader (DESIGN §6), so the
 * acknowledgements commit or abort with the transaction.
 *
 * Kafka: none yet (kipgen is KIP-1289's first implementation); modelled on
 * KafkaApis.handleAddOffsetsToTxnRequest and
 * TransactionCoordinator.handleAddPartitionsToTransaction.
 * - An empty group id is INVALID_GROUP_ID. A partition that does not exist is
 *   UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED, nothing
 *   added (as AddPartitionsToTxn). An error of the whole transaction (fenced,
 *   concurrent transactions…) is also the top-level error code.
 * - Served only with kip1289 on (`--no-kip1289` turns it off).
 * Rule: WRITE on the transactional id and READ on the share group (as
 * AddOffsetsToTxn), each answered at the top level, and READ on each topic whose
 * acks it binds, a denied one answered per partition (coordinator/README.md).
 */
import { AddShareAcksToTxnRequest } from '../../generated/AddShareAcksToTxnRequest.js';
import { AddShareAcksToTxnResponse, createAddShareAcksToTxnTopicResult } from '../../generated/AddShareAcksToTxnResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { requirePermission, splitEntries, topicAllowed } from '../auth/rule-kit.js';
import { SHARE_GROUP_STATE_TOPIC } from '../cluster.js';
import { ErrorCode } from '../errors.js';
import { isTransactionLevel, partitionKey, unknownPartitions } from '../txn/partition-additions.js';
import { defineApi } from './define.js';

export default defineApi({
  request: AddShareAcksToTxnRequest,
  response: AddShareAcksToTxnResponse,
  servedWhen: (config) => config.kip1289,
  authorize: async (request, check, _ctx, next) => {
    requirePermission(check, Res.TRANSACTIONAL_ID, request.transactionalId, Op.WRITE, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    requirePermission(check, Res.GROUP, request.groupId, Op.READ, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    return splitEntries(request, next, {
      entries: request.topics,
      allowed: (t) => topicAllowed(check, t, Op.READ),
      keep: (topics) => ({ ...request, topics }),
      empty: () => AddShareAcksToTxnResponse.create(),
      answerDenied: (response, denied) =>
        response.results.push(
          ...denied.map((t) =>
            createAddShareAcksToTxnTopicResult({
              name: t.name,
              partitions: t.partitions.map((p) => ({ partitionIndex: p, partitionErrorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED })),
            }),
          ),
        ),
    });
  },
  handler:
    ({ cluster, transactions }) =>
    async (request) => {
      const topics = request.topics;
      const unknown = unknownPartitions(cluster, topics);
      const shareStatePartitions = new Set<number>();
      for (const t of topics)
        for (const p of t.partitions) if (!unknown?.has(partitionKey(t.name, p))) shareStatePartitions.add(cluster.shareStatePartitionFor(t.name, p));
      let code: number = ErrorCode.NONE;
      if (request.groupId === '') code = ErrorCode.INVALID_GROUP_ID;
      else if (unknown === null && shareStatePartitions.size > 0) {
        code = await transactions.addPartitions(
          request.transactionalId,
          request.producerId,
          request.producerEpoch,
          [...shareStatePartitions].map((partition) => ({ topic: SHARE_GROUP_STATE_TOPIC, partition })),
          0,
          request.groupId,
        );
      }
      const partitionCode = (name: string, p: number): number => {
        if (unknown !== null) return unknown.has(partitionKey(name, p)) ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.OPERATION_NOT_ATTEMPTED;
        return code;
      };
      return AddShareAcksToTxnResponse.create({
        errorCode: isTransactionLevel(code) ? code : ErrorCode.NONE,
        results: topics.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => ({ partitionIndex: p, partitionErrorCode: partitionCode(t.name, p) })),
        })),
      });
    },
});
