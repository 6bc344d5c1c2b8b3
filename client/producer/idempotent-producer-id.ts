/**
 * The producer id and epoch of an idempotent producer without a transactional
 * id: fetched with InitProducerId from any broker before its first batch, and
 * given a new epoch when the sequences of a partition cannot go on (a batch
 * with a sequence failed or expired, a gap at the broker). Kafka keeps this in
 * its TransactionManager for both kinds of producer
 * (TransactionManager.initializeTransactions / resetIdempotentProducerId);
 * kipgen's TransactionManager serves transactional producers only.
 */
import { InitProducerIdRequest, InitProducerIdResponse } from '../../generated/index.js';
import type { ClusterClient } from '../cluster.js';
import { errorFromCode, Errors } from '../errors.js';
import { INIT_PRODUCER_ID_2PC_VERSION } from '../transaction-protocol.js';

/** The highest InitProducerId version this producer sends: KIP-939's two-phase-commit fields mean nothing without a transactional id. */
const INIT_PRODUCER_ID_MAX_VERSION = INIT_PRODUCER_ID_2PC_VERSION - 1;

/** The largest producer epoch (int16), Kafka's Short.MAX_VALUE. */
const MAX_EPOCH = 32767;

export interface IdempotentProducerIdHooks {
  /** A new producer id: every partition's sequence starts again. */
  fetched(): void;
  /** InitProducerId failed for good: what waits for an id cannot be sent. */
  failed(error: Error): void;
  /** The fetch ended either way: the sender may look again. */
  settled(): void;
}

export class IdempotentProducerId {
  id = -1n;
  epoch = -1;
  private fetching: Promise<void> | null = null;

  constructor(
    private readonly cluster: ClusterClient,
    private readonly options: { maxBlockMs: number; transactionTimeoutMs: number },
    private readonly hooks: IdempotentProducerIdHooks,
  ) {}

  get valid(): boolean {
    return this.id >= 0n;
  }

  /** Forget the id: the next batch waits for a new one. */
  reset(): void {
    this.id = -1n;
  }

  /**
   * The next epoch of the same id, chosen here without asking a broker (KIP-360;
   * Kafka's TransactionManager.bumpIdempotentProducerEpoch): the broker takes
   * a higher epoch starting at sequence 0. At the last epoch the id is
   * dropped instead and a new one fetched. Returns whether the id is kept.
   */
  bumpEpoch(): boolean {
    if (this.epoch >= MAX_EPOCH) {
      this.reset();
      return false;
    }
    this.epoch++;
    return true;
  }

  /** Starts fetching an id unless a fetch is under way; the hooks tell how it went. */
  ensure(): void {
    if (this.fetching) return;
    this.fetching = this.fetch()
      .catch((error: unknown) => {
        this.cluster.logger.error(`producer ${this.cluster.clientId}: could not get a producer id: ${(error as Error).message}`);
        this.hooks.failed(error as Error);
      })
      .finally(() => {
        this.fetching = null;
        this.hooks.settled();
      });
  }

  private async fetch(): Promise<void> {
    const deadline = Date.now() + this.options.maxBlockMs;
    const { response } = await this.cluster.retry('InitProducerId', deadline, async () => {
      const result = await this.cluster.send(
        this.cluster.anyNode(),
        InitProducerIdRequest,
        InitProducerIdResponse,
        () => InitProducerIdRequest.create({ transactionalId: null, transactionTimeoutMs: this.options.transactionTimeoutMs }),
        { deadline, max: INIT_PRODUCER_ID_MAX_VERSION },
      );
      if (result.response.errorCode !== Errors.NONE) throw errorFromCode(result.response.errorCode, 'InitProducerId');
      return result;
    });
    this.id = response.producerId;
    this.epoch = response.producerEpoch;
    this.hooks.fetched();
  }
}
