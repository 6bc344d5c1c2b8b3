/**
 * InitProducerId (key 22): a producer id and epoch for an idempotent producer (a
 * fresh id each time), or for a transactional id (fencing the previous producer of
 * that id, aborting or — with 2PC — keeping its open transaction).
 *
 * Kafka: KafkaApis.handleInitProducerIdRequest,
 * TransactionCoordinator.handleInitProducerId.
 * - v3+: the producer may send its current id and epoch to recover after an
 *   abortable error (KIP-360).
 * - v6: KIP-939 two-phase commit (Enable2Pc, KeepPreparedTxn,
 *   OngoingTxnProducerId/Epoch); 2PC refused by the broker setting is answered
 *   TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as Kafka.
 * Rule: WRITE on the transactional id, and TWO_PHASE_COMMIT on it to enable 2PC
 * (KIP-939); without a transactional id, IDEMPOTENT_WRITE on the cluster or WRITE
 * on some topic (KIP-679). Denials answer the whole request.
 */
import { InitProducerIdRequest } from '../../generated/InitProducerIdRequest.js';
import { InitProducerIdResponse } from '../../generated/InitProducerIdResponse.js';
import { AclOperation as Op, CLUSTER_NAME, ResourceType as Res } from '../auth/acl.js';
import { requirePermission } from '../auth/rule-kit.js';
import { BrokerError, ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

export default defineApi({
  request: InitProducerIdRequest,
  response: InitProducerIdResponse,
  authorize: async (request, check, _ctx, next) => {
    if (request.transactionalId) {
      requirePermission(check, Res.TRANSACTIONAL_ID, request.transactionalId, Op.WRITE, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
      if (request.enable2Pc)
        requirePermission(check, Res.TRANSACTIONAL_ID, request.transactionalId, Op.TWO_PHASE_COMMIT, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    } else if (!check.allow(Res.CLUSTER, CLUSTER_NAME, Op.IDEMPOTENT_WRITE) && !check.allowAny(Res.TOPIC, Op.WRITE)) {
      throw new BrokerError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'not authorized');
    }
    return next(request);
  },
  handler:
    ({ transactions }) =>
    async (request) => {
      const result = await transactions.initProducerId(
        request.transactionalId,
        request.transactionTimeoutMs,
        { producerId: request.producerId, producerEpoch: request.producerEpoch },
        { enable2Pc: request.enable2Pc, keepPreparedTxn: request.keepPreparedTxn },
      );
      return InitProducerIdResponse.create(result);
    },
});
