/**
 * DescribeTransactions (key 65, KIP-664): the transaction coordinator's state
 * of some transactional ids — state, producer id and epoch, timeout, start time
 * and the partitions in the open transaction. Admin.describeTransactions; with
 * DescribeProducers and WriteTxnMarkers, the tooling that finds and aborts
 * hanging transactions, and recovery tooling for KIP-939 prepared ones.
 *
 * Kafka: KafkaApis.handleDescribeTransactionsRequest, TransactionCoordinator.handleDescribeTransactions.
 * - An id this node does not coordinate is NOT_COORDINATOR, an empty one INVALID_REQUEST,
 *   an unknown (or expiring, Dead) one TRANSACTIONAL_ID_NOT_FOUND.
 * - The state is Kafka's name (Ongoing, PrepareCommit, ...); the partitions are those
 *   in the transaction (kipgen keeps them all until the transaction completes, where
 *   Kafka drops each once its marker is written).
 * Rule: DESCRIBE on each transactional id (denied: TRANSACTIONAL_ID_AUTHORIZATION_FAILED
 * and nothing else), and only the topics the caller may DESCRIBE are shown.
 */
import { DescribeTransactionsRequest } from '../../generated/DescribeTransactionsRequest.js';
import { DescribeTransactionsResponse, type TransactionState } from '../../generated/DescribeTransactionsResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { ErrorCode } from '../errors.js';
import { TxnState, kafkaTxnStateName } from '../txn/transaction-state.js';
import { defineApi } from './define.js';

/** An id answered with an error: the other fields at the schema's defaults (zeros), as Kafka leaves them. */
const failed = (transactionalId: string, errorCode: number): TransactionState => ({
  errorCode,
  transactionalId,
  transactionState: '',
  transactionTimeoutMs: 0,
  transactionStartTimeMs: 0n,
  producerId: 0n,
  producerEpoch: 0,
  topics: [],
});

export default defineApi({
  request: DescribeTransactionsRequest,
  response: DescribeTransactionsResponse,
  authorize: async (request, check, _ctx, next) => {
    const allowed = request.transactionalIds.filter((id) => check.allow(Res.TRANSACTIONAL_ID, id, Op.DESCRIBE));
    const answered = allowed.length > 0 ? (await next({ ...request, transactionalIds: allowed })).transactionStates : [];
    // In the request's order, as Kafka answers id by id.
    const transactionStates = request.transactionalIds.map((id) => {
      const state = answered.find((s) => s.transactionalId === id) ?? failed(id, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
      return { ...state, topics: state.topics.filter((t) => check.allow(Res.TOPIC, t.topic, Op.DESCRIBE)) };
    });
    return DescribeTransactionsResponse.create({ transactionStates });
  },
  handler:
    ({ transactions }) =>
    async (request) => {
      const transactionStates = request.transactionalIds.map((transactionalId): TransactionState => {
        if (transactionalId === '') return failed(transactionalId, ErrorCode.INVALID_REQUEST);
        if (!transactions.isCoordinatorFor(transactionalId)) return failed(transactionalId, ErrorCode.NOT_COORDINATOR);
        const meta = transactions.get(transactionalId);
        if (meta === undefined || meta.state === TxnState.DEAD) return failed(transactionalId, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
        return {
          errorCode: ErrorCode.NONE,
          transactionalId,
          transactionState: kafkaTxnStateName(meta.state),
          transactionTimeoutMs: meta.timeoutMs,
          transactionStartTimeMs: BigInt(meta.startTimestamp),
          producerId: meta.producerId,
          producerEpoch: meta.producerEpoch,
          topics: [...meta.partitions].map(([topic, partitions]) => ({ topic, partitions: [...partitions].sort((a, b) => a - b) })),
        };
      });
      return DescribeTransactionsResponse.create({ transactionStates });
    },
});
