/**
 * ListTransactions (key 66, KIP-664): the transactional ids this node
 * coordinates, filtered by state, producer id, how long the transaction has run
 * (v1, KIP-994) and a transactional id pattern (v2, KIP-1152). Admin.listTransactions:
 * finding long-running or hanging transactions, and KIP-939 prepared ones to recover.
 *
 * Kafka: KafkaApis.handleListTransactionsRequest, TransactionStateManager.listTransactionStates.
 * - State filters by Kafka's names, case-sensitive; the ones naming no state are
 *   returned in UnknownStateFilters (and match nothing). Dead ids are never listed.
 * - DurationFilter ≥ 0 keeps the transactions started more than that many ms ago.
 * - The pattern must match the whole id. Deviation: it is a JavaScript regular
 *   expression (Kafka's is java.util.regex; the two agree on ordinary patterns); one
 *   that does not compile is INVALID_REGULAR_EXPRESSION, as in Kafka.
 * Rule: only the ids the caller may DESCRIBE are listed.
 */
import { ListTransactionsRequest } from '../../generated/ListTransactionsRequest.js';
import { ListTransactionsResponse } from '../../generated/ListTransactionsResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { ErrorCode } from '../errors.js';
import { TxnState, kafkaTxnStateName, txnStateFromKafkaName, type TxnStateCode } from '../txn/transaction-state.js';
import { defineApi } from './define.js';

const FIRST_DURATION_FILTER_VERSION = 1;
const FIRST_PATTERN_VERSION = 2;

export default defineApi({
  request: ListTransactionsRequest,
  response: ListTransactionsResponse,
  authorize: async (request, check, _ctx, next) => {
    const response = await next(request);
    response.transactionStates = response.transactionStates.filter((s) => check.allow(Res.TRANSACTIONAL_ID, s.transactionalId, Op.DESCRIBE));
    return response;
  },
  handler:
    ({ transactions }) =>
    async (request, ctx) => {
      const unknownStateFilters: string[] = [];
      const states = new Set<TxnStateCode>();
      for (const name of request.stateFilters) {
        const state = txnStateFromKafkaName(name);
        if (state === undefined) unknownStateFilters.push(name);
        else states.add(state);
      }
      const producerIds = new Set(request.producerIdFilters);
      const duration = ctx.apiVersion >= FIRST_DURATION_FILTER_VERSION ? request.durationFilter : -1n;
      const source = ctx.apiVersion >= FIRST_PATTERN_VERSION ? request.transactionalIdPattern : null;
      let pattern: RegExp | null = null;
      if (source !== null && source !== '') {
        try {
          pattern = new RegExp(`^(?:${source})$`, 'u');
        } catch {
          return ListTransactionsResponse.create({ errorCode: ErrorCode.INVALID_REGULAR_EXPRESSION, unknownStateFilters });
        }
      }
      const now = BigInt(Date.now());
      const transactionStates = transactions
        .all()
        .filter(
          (meta) =>
            meta.state !== TxnState.DEAD &&
            transactions.isCoordinatorFor(meta.transactionalId) &&
            (producerIds.size === 0 || producerIds.has(meta.producerId)) &&
            (request.stateFilters.length === 0 || states.has(meta.state)) &&
            (duration < 0n || now - BigInt(meta.startTimestamp) > duration) &&
            (pattern === null || pattern.test(meta.transactionalId)),
        )
        .map((meta) => ({ transactionalId: meta.transactionalId, producerId: meta.producerId, transactionState: kafkaTxnStateName(meta.state) }));
      return ListTransactionsResponse.create({ errorCode: ErrorCode.NONE, unknownStateFilters, transactionStates });
    },
});
