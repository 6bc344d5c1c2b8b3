/**
 * EndTxn (key 26): the producer commits or aborts its transaction; the
 * coordinator writes PREPARE_COMMIT / PREPARE_ABORT, answers, then sends the
 * markers (txn/marker-sender.ts).
 *
 * Kafka: KafkaApis.handleEndTxnRequest, TransactionCoordinator.handleEndTransaction.
 * - v5+ is a Transactions V2 client (KIP-890 part 2): the transaction ends with an
 *   epoch bump and the answer carries the producer id and epoch to use next. At
 *   transaction.version 1 every client is treated as V1, whatever version it sends.
 * Rule: WRITE on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
 */
import { EndTxnRequest } from '../../generated/EndTxnRequest.js';
import { EndTxnResponse } from '../../generated/EndTxnResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { requirePermission } from '../auth/rule-kit.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

/** The first EndTxn version only a Transactions V2 client sends. */
const FIRST_TV2_VERSION = 5;

export default defineApi({
  request: EndTxnRequest,
  response: EndTxnResponse,
  authorize: (request, check, _ctx, next) => {
    requirePermission(check, Res.TRANSACTIONAL_ID, request.transactionalId, Op.WRITE, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    return next(request);
  },
  handler:
    ({ config, transactions }) =>
    async (request, ctx) => {
      const clientTransactionVersion = ctx.apiVersion >= FIRST_TV2_VERSION && config.transactionVersion >= 2 ? 2 : 0;
      const result = await transactions.endTransaction(
        request.transactionalId,
        request.producerId,
        request.producerEpoch,
        request.committed,
        clientTransactionVersion,
      );
      return EndTxnResponse.create({ errorCode: result.errorCode, producerId: result.producerId, producerEpoch: result.producerEpoch });
    },
});
