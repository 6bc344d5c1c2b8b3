/**
 * InitProducerId for a transactional id (Kafka's
 * TransactionManager.InitProducerIdHandler): a new producer id and epoch that
 * fence older producers, an epoch bump that keeps the producer id (v3+), or
 * with KIP-939 two-phase commit (v6) the transaction an earlier producer
 * prepared, kept open.
 *
 * Where it differs from Kafka's handler: every error that is not a
 * coordinator error fails the call without a retry, and the caller makes it
 * fatal (Kafka retries retriable ones and makes TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
 * CLUSTER_AUTHORIZATION_FAILED and TRANSACTION_ABORTABLE abortable; this
 * client's state machine has no ABORTABLE_ERROR after INITIALIZING).
 */
import { InitProducerIdRequest, InitProducerIdResponse } from '../../generated/index.js';
import { CoordinatorType } from '../cluster.js';
import { Errors, errorFromCode } from '../errors.js';
import { INIT_PRODUCER_ID_2PC_VERSION, INIT_PRODUCER_ID_BUMP_MIN_VERSION, TV1_MAX_VERSIONS } from '../transaction-protocol.js';
import { coordinatorError, coordinatorNext, DONE, fail, type Next, type TxnContext, type TxnRequestHandler } from './handler.js';

export interface InitProducerIdOptions {
  /** Bump the current producer id's epoch instead of asking for a new identity. */
  bump: boolean;
  /** KIP-939 keepPreparedTxn: keep an open transaction instead of aborting it. */
  keepPreparedTxn: boolean;
  enable2Pc: boolean;
  transactionTimeoutMs: number;
}

export class InitProducerIdHandler implements TxnRequestHandler<InitProducerIdRequest, InitProducerIdResponse> {
  readonly what = 'InitProducerId';
  readonly coordinatorType = CoordinatorType.TRANSACTION;
  readonly requestCodec = InitProducerIdRequest;
  readonly responseCodec = InitProducerIdResponse;
  readonly coordinatorKey: string;
  readonly versions: { min: number; max: number };

  constructor(
    private readonly txn: TxnContext,
    private readonly options: InitProducerIdOptions,
  ) {
    this.coordinatorKey = txn.transactionalId;
    this.versions = options.enable2Pc
      ? { min: INIT_PRODUCER_ID_2PC_VERSION, max: INIT_PRODUCER_ID_2PC_VERSION }
      : { min: options.bump ? INIT_PRODUCER_ID_BUMP_MIN_VERSION : 0, max: TV1_MAX_VERSIONS.initProducerId };
  }

  build(): InitProducerIdRequest {
    const { bump } = this.options;
    return InitProducerIdRequest.create({
      transactionalId: this.txn.transactionalId,
      transactionTimeoutMs: this.options.transactionTimeoutMs,
      producerId: bump ? this.txn.identity.producerId : -1n,
      producerEpoch: bump ? this.txn.identity.producerEpoch : -1,
      enable2Pc: this.options.enable2Pc,
      keepPreparedTxn: this.options.keepPreparedTxn,
    });
  }

  handleResponse(response: InitProducerIdResponse): Next {
    const code = response.errorCode;
    if (code === Errors.NONE) return DONE;
    const coordinator = coordinatorNext(code);
    if (coordinator) return coordinator;
    if (code === Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED && this.options.enable2Pc) {
      return fail(
        errorFromCode(
          code,
          `InitProducerId with two-phase commit for transactional id ${this.txn.transactionalId}`,
          'the broker refuses two-phase commit (its transaction.two.phase.commit.enable is false, or this principal may not use it): enable it there, or unset transactionTwoPhaseCommitEnable',
        ),
      );
    }
    return fail(coordinatorError(this.txn.transactionalId, code, 'InitProducerId'));
  }
}
