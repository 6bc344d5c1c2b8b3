/**
 * EndTxn (Kafka's TransactionManager.EndTxnHandler): commits or aborts the
 * transaction of a producer id and epoch. Under Transactions V2 (v5+) the
 * answer carries the bumped epoch, or a new producer id when the epoch ran
 * out. Also used to finish a transaction a checkpoint named, after a restart
 * (KIP-939): a retry of the same result succeeds (DESIGN §5.6).
 *
 * Where it differs from Kafka's handler: errors other than coordinator ones
 * fail the call without a retry; UNKNOWN_PRODUCER_ID and TRANSACTION_ABORTABLE
 * are not special (the caller's state machine decides what an error means).
 */
import { EndTxnRequest, EndTxnResponse } from '../../generated/index.js';
import { type ClusterClient, CoordinatorType } from '../cluster.js';
import { Errors, errorCodeName, errorFromCode, ProducerFencedError } from '../errors.js';
import { FENCED_CODES, TV1_MAX_VERSIONS, TV2_MIN_VERSIONS } from '../transaction-protocol.js';
import { coordinatorNext, DONE, fail, sendTxnRequest, type Next, type TxnRequestHandler } from './handler.js';
import type { PreparedTransaction } from './prepared-txn-state.js';

export class EndTxnHandler implements TxnRequestHandler<EndTxnRequest, EndTxnResponse> {
  readonly what: string;
  readonly coordinatorType = CoordinatorType.TRANSACTION;
  readonly requestCodec = EndTxnRequest;
  readonly responseCodec = EndTxnResponse;
  readonly coordinatorKey: string;
  readonly versions: { min?: number; max?: number };

  constructor(
    private readonly txn: PreparedTransaction,
    private readonly commit: boolean,
    transactionV2: boolean,
  ) {
    this.what = `EndTxn(${commit ? 'COMMIT' : 'ABORT'})`;
    this.coordinatorKey = txn.transactionalId;
    this.versions = transactionV2 ? { min: TV2_MIN_VERSIONS.endTxn } : { max: TV1_MAX_VERSIONS.endTxn };
  }

  build(): EndTxnRequest {
    return EndTxnRequest.create({
      transactionalId: this.txn.transactionalId,
      producerId: this.txn.producerId,
      producerEpoch: this.txn.producerEpoch,
      committed: this.commit,
    });
  }

  handleResponse(response: EndTxnResponse): Next {
    const code = response.errorCode;
    if (code === Errors.NONE) return DONE;
    const coordinator = coordinatorNext(code);
    if (coordinator) return coordinator;
    const { transactionalId, producerId, producerEpoch } = this.txn;
    const which = `${this.what} for transactional id ${transactionalId}`;
    if (FENCED_CODES.has(code)) {
      return fail(
        new ProducerFencedError(
          code,
          `${which} (producer id ${producerId}, epoch ${producerEpoch}) failed with ${errorCodeName(code)}: ` +
            'a newer producer with this transactional.id started, or the coordinator aborted the transaction after transaction.timeout.ms. ' +
            'Close this producer; records and acknowledgements of the aborted transaction are redelivered.',
        ),
      );
    }
    if (code === Errors.INVALID_TXN_STATE) {
      return fail(
        errorFromCode(
          code,
          `${which} (producer id ${producerId}, epoch ${producerEpoch}) — the transaction is not open, or it ended with the other result (e.g. aborted on timeout)`,
        ),
      );
    }
    return fail(errorFromCode(code, which));
  }
}

/**
 * EndTxn for a given producer id and epoch, retried within the deadline.
 * Resolves to the producer id and epoch the answer carries (-1 before v5).
 */
export async function endTransaction(
  cluster: ClusterClient,
  txn: PreparedTransaction,
  commit: boolean,
  deadline: number,
  transactionV2 = false,
): Promise<{ producerId: bigint; producerEpoch: number }> {
  const response = await sendTxnRequest(cluster, new EndTxnHandler(txn, commit, transactionV2), { deadline });
  return { producerId: response.producerId, producerEpoch: response.producerEpoch };
}
