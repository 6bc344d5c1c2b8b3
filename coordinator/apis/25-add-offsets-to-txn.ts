/**
 * AddOffsetsToTxn (key 25): a transactional producer about to send consumer
 * offsets (TxnOffsetCommit) adds the group's __consumer_offsets partition to
 * its transaction, so the offsets commit or abort with it.
 *
 * Kafka: KafkaApis.handleAddOffsetsToTxnRequest, TransactionCoordinator
 * handleAddPartitionsToTransaction. Rule: WRITE on the transactional id, then
 * READ on the group, each denial answered at the top level as Kafka does.
 */
import { AddOffsetsToTxnRequest } from '../../generated/AddOffsetsToTxnRequest.js';
import { AddOffsetsToTxnResponse } from '../../generated/AddOffsetsToTxnResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { requirePermission } from '../auth/rule-kit.js';
import { CONSUMER_OFFSETS_TOPIC } from '../cluster.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

export default defineApi({
  request: AddOffsetsToTxnRequest,
  response: AddOffsetsToTxnResponse,
  authorize: (request, check, _ctx, next) => {
    requirePermission(check, Res.TRANSACTIONAL_ID, request.transactionalId, Op.WRITE, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    requirePermission(check, Res.GROUP, request.groupId, Op.READ, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    return next(request);
  },
  handler:
    ({ cluster, transactions }) =>
    async (request) => {
      const partition = cluster.offsetsPartitionFor(request.groupId);
      const errorCode = await transactions.addPartitions(request.transactionalId, request.producerId, request.producerEpoch, [
        { topic: CONSUMER_OFFSETS_TOPIC, partition },
      ]);
      return AddOffsetsToTxnResponse.create({ errorCode });
    },
});
