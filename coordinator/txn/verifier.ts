/**
 * Asks the transaction coordinator whether a partition is in a producer's
 * ongoing transaction before a partition leader accepts that producer's
 * first transactional write to it (KIP-890 part 1). The coordinator may be
 * this node (a direct call) or another (AddPartitionsToTxn v4, VerifyOnly,
 * over TCP — the same request Kafka brokers send).
 */
import { AddPartitionsToTxnRequest, AddPartitionsToTxnResponse } from '../../generated/index.js';
import { TRANSACTION_STATE_TOPIC, type Cluster } from '../cluster.js';
import { ErrorCode, BrokerError, errorCodeName } from '../errors.js';
import type { PartitionLog } from '../log/partition-log.js';
import type { PeerConnections } from '../net/peers.js';
import type { TransactionCoordinator } from './transaction-coordinator.js';

const VERIFY_VERSION = 4;

export class TransactionVerifier {
  constructor(
    private readonly cluster: Cluster,
    private readonly tc: TransactionCoordinator,
    private readonly peers: PeerConnections,
  ) {}

  /**
   * Before a transactional write to a partition this node leads: asks the
   * coordinator only when the producer has no transaction open in that log
   * yet (a later write of the same transaction was verified with the first).
   */
  async verifyWrite(log: PartitionLog, transactionalId: string | null, producerId: bigint, producerEpoch: number): Promise<void> {
    if (log.producers.hasOngoingTransaction(producerId, producerEpoch)) return;
    await this.verify(transactionalId, producerId, producerEpoch, log.topic, log.partition);
  }

  /** Resolves when the partition is in the transaction; rejects with BrokerError (INVALID_TXN_STATE, PRODUCER_FENCED, …) otherwise. */
  private async verify(transactionalId: string | null, producerId: bigint, producerEpoch: number, topic: string, partition: number): Promise<void> {
    if (transactionalId === null || transactionalId === '') {
      throw new BrokerError(ErrorCode.INVALID_TXN_STATE, `transactional write to ${topic}-${partition} without a transactional id`);
    }
    const code = this.tc.isCoordinatorFor(transactionalId)
      ? this.tc.verify(transactionalId, producerId, producerEpoch, topic, partition)
      : await this.verifyRemote(transactionalId, producerId, producerEpoch, topic, partition);
    if (code !== ErrorCode.NONE) {
      throw new BrokerError(
        code,
        `${topic}-${partition} is not in the ongoing transaction of ${transactionalId} (producer ${producerId} epoch ${producerEpoch}): ${errorCodeName(code)}`,
      );
    }
  }

  private async verifyRemote(transactionalId: string, producerId: bigint, producerEpoch: number, topic: string, partition: number): Promise<number> {
    const coordinator = this.cluster.leaderOf(TRANSACTION_STATE_TOPIC, this.cluster.transactionPartitionFor(transactionalId));
    try {
      const connection = await this.peers.get(coordinator);
      const response = await connection.send(
        AddPartitionsToTxnRequest,
        AddPartitionsToTxnRequest.create({
          transactions: [{ transactionalId, producerId, producerEpoch, verifyOnly: true, topics: [{ name: topic, partitions: [partition] }] }],
        }),
        VERIFY_VERSION,
        AddPartitionsToTxnResponse,
      );
      if (response.errorCode !== ErrorCode.NONE) return response.errorCode;
      const result = response.resultsByTransaction[0]?.topicResults[0]?.resultsByPartition[0];
      return result?.partitionErrorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR;
    } catch {
      // Retriable for the producer, as Kafka answers when its coordinator cannot be reached.
      return ErrorCode.NOT_ENOUGH_REPLICAS;
    }
  }
}
