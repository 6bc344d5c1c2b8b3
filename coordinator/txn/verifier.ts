/**
 * Asks the transaction coordinator whether a partition is in a producer's
 * ongoing transaction before a partition leader accepts that producer's
 * first transactional write to it (KIP-890 part 1) — or, for a TV2 producer
 * (Produce v12+, TxnOffsetCommit v5+, with `transaction.version` 2
 * finalized), adds it to the transaction (KIP-890 part 2: the producer sends
 * no AddPartitionsToTxn / AddOffsetsToTxn). The coordinator may be this node
 * (a direct call) or another (AddPartitionsToTxn v4 VerifyOnly, or v5 to add,
 * over TCP — the requests Kafka brokers send).
 */
import { AddPartitionsToTxnRequest, AddPartitionsToTxnResponse } from '../../generated/index.js';
import { TRANSACTION_STATE_TOPIC, type Cluster } from '../cluster.js';
import { ErrorCode, BrokerError, errorCodeName } from '../errors.js';
import type { PartitionLog } from '../log/partition-log.js';
import type { PeerConnections } from '../net/peers.js';
import type { TransactionCoordinator } from './transaction-coordinator.js';

const VERIFY_VERSION = 4;
/** AddPartitionsToTxn v5: a partition leader adding a partition for a TV2 producer. */
const ADD_VERSION = 5;

const SHARE_GROUP_VERIFY_PREFIX = '__share_group_state/';

/** The pseudo-topic that carries a share group to verify in AddPartitionsToTxn v4 VerifyOnly between kipgen brokers. */
export function shareGroupVerifyTopic(groupId: string): string {
  return SHARE_GROUP_VERIFY_PREFIX + groupId;
}

/** The share group of such a pseudo-topic, or null for a real topic. */
export function shareGroupOfVerifyTopic(name: string): string | null {
  return name.startsWith(SHARE_GROUP_VERIFY_PREFIX) ? name.slice(SHARE_GROUP_VERIFY_PREFIX.length) : null;
}

export class TransactionVerifier {
  constructor(
    private readonly cluster: Cluster,
    private readonly tc: TransactionCoordinator,
    private readonly peers: PeerConnections,
    /** The finalized `transaction.version`: below 2 nothing is added implicitly. */
    private readonly transactionVersion = 2,
  ) {}

  /**
   * Before a transactional write to a partition this node leads: asks the
   * coordinator only when the producer has no transaction open in that log
   * yet (a later write of the same transaction was verified with the first).
   */
  async verifyWrite(
    log: PartitionLog,
    transactionalId: string | null,
    producerId: bigint,
    producerEpoch: number,
    implicitAdd = false,
  ): Promise<void> {
    if (log.producers.hasOngoingTransaction(producerId, producerEpoch)) return;
    await this.verify(transactionalId, producerId, producerEpoch, log.topic, log.partition, implicitAdd && this.transactionVersion >= 2);
  }

  /**
   * Before a transactional share-state write (TxnShareAcknowledge): the
   * `__share_group_state` partition must be in the transaction and the
   * transaction must hold acks for `groupId` (AddShareAcksToTxn for that
   * group); otherwise INVALID_TXN_STATE, as for a partition not added.
   */
  async verifyShareGroupWrite(log: PartitionLog, transactionalId: string | null, producerId: bigint, producerEpoch: number, groupId: string): Promise<void> {
    if (transactionalId === null || transactionalId === '') {
      throw new BrokerError(ErrorCode.INVALID_TXN_STATE, `transactional share acknowledgement without a transactional id`);
    }
    const code = this.tc.isCoordinatorFor(transactionalId)
      ? this.tc.verify(transactionalId, producerId, producerEpoch, log.topic, log.partition, groupId)
      : await this.verifyRemote(transactionalId, producerId, producerEpoch, log.topic, log.partition, false, groupId);
    if (code !== ErrorCode.NONE) {
      throw new BrokerError(
        code,
        `the transaction of ${transactionalId} (producer ${producerId} epoch ${producerEpoch}) holds no acknowledgements for share group ${groupId} ` +
          `(AddShareAcksToTxn for that group first): ${errorCodeName(code)}`,
      );
    }
  }

  /** Resolves when the partition is in the transaction; rejects with BrokerError (INVALID_TXN_STATE, PRODUCER_FENCED, …) otherwise. */
  private async verify(
    transactionalId: string | null,
    producerId: bigint,
    producerEpoch: number,
    topic: string,
    partition: number,
    add: boolean,
  ): Promise<void> {
    if (transactionalId === null || transactionalId === '') {
      throw new BrokerError(ErrorCode.INVALID_TXN_STATE, `transactional write to ${topic}-${partition} without a transactional id`);
    }
    let code: number;
    if (!this.tc.isCoordinatorFor(transactionalId)) code = await this.verifyRemote(transactionalId, producerId, producerEpoch, topic, partition, add);
    else if (add) code = await this.tc.addPartitions(transactionalId, producerId, producerEpoch, [{ topic, partition }], 2);
    else code = this.tc.verify(transactionalId, producerId, producerEpoch, topic, partition);
    // Kafka's AddPartitionsToTxnManager answers the write with INVALID_PRODUCER_EPOCH where the coordinator said
    // PRODUCER_FENCED ("Producers expect to handle INVALID_PRODUCER_EPOCH in this scenario"): a fenced producer's
    // Produce or TxnOffsetCommit fails with InvalidProducerEpochException in Kafka's client, not ProducerFencedException.
    if (code === ErrorCode.PRODUCER_FENCED) code = ErrorCode.INVALID_PRODUCER_EPOCH;
    if (code !== ErrorCode.NONE) {
      throw new BrokerError(
        code,
        `${topic}-${partition} is not in the ongoing transaction of ${transactionalId} (producer ${producerId} epoch ${producerEpoch}): ${errorCodeName(code)}`,
      );
    }
  }

  private async verifyRemote(
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    topic: string,
    partition: number,
    add: boolean,
    shareGroup?: string,
  ): Promise<number> {
    const coordinator = this.cluster.leaderOf(TRANSACTION_STATE_TOPIC, this.cluster.transactionPartitionFor(transactionalId));
    try {
      const connection = await this.peers.get(coordinator);
      const response = await connection.send(
        AddPartitionsToTxnRequest,
        AddPartitionsToTxnRequest.create({
          transactions: [
            {
              transactionalId,
              producerId,
              producerEpoch,
              verifyOnly: !add,
              // kipgen to kipgen: a share group to check travels as a pseudo-topic no real topic can be named like ('/').
              topics: [{ name: topic, partitions: [partition] }, ...(shareGroup === undefined ? [] : [{ name: shareGroupVerifyTopic(shareGroup), partitions: [partition] }])],
            },
          ],
        }),
        add ? ADD_VERSION : VERIFY_VERSION,
        AddPartitionsToTxnResponse,
      );
      if (response.errorCode !== ErrorCode.NONE) return response.errorCode;
      const results = response.resultsByTransaction[0]?.topicResults.flatMap((t) => t.resultsByPartition) ?? [];
      if (results.length === 0) return ErrorCode.UNKNOWN_SERVER_ERROR;
      return results.find((r) => r.partitionErrorCode !== ErrorCode.NONE)?.partitionErrorCode ?? ErrorCode.NONE;
    } catch {
      // Retriable for the producer, as Kafka answers when its coordinator cannot be reached.
      return ErrorCode.NOT_ENOUGH_REPLICAS;
    }
  }
}
