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

/**
 * The pseudo-topic a kipgen leader adds to its AddPartitionsToTxn (v4 verify,
 * v5 add) to learn whether the producer uses two-phase commit: the
 * coordinator answers its partition 0 with NONE if so, OPERATION_NOT_ATTEMPTED
 * if not ('/' keeps it apart from every real topic).
 */
export const TWO_PHASE_PROBE_TOPIC = '__transaction_state/two-phase';

/** Producer ids remembered as one-shot (not two-phase) at most; the oldest is forgotten (and verified again) past it. */
const ONE_SHOT_CAPACITY = 65_536;

interface Verified {
  code: number;
  twoPhase: boolean;
}

export class TransactionVerifier {
  /**
   * Producer id → the epoch verified as not two-phase. Whether a producer id +
   * epoch uses two-phase commit never changes (a new InitProducerId bumps the
   * epoch, and only a two-phase transaction is kept), so a later write of
   * that epoch in a transaction already open in the log needs no new check.
   */
  private readonly oneShot = new Map<bigint, number>();

  constructor(
    private readonly cluster: Cluster,
    private readonly tc: TransactionCoordinator,
    private readonly peers: PeerConnections,
    /** The finalized `transaction.version`: below 2 nothing is added implicitly. */
    private readonly transactionVersion = 2,
  ) {}

  /**
   * Before a transactional write to a partition this node leads. As Kafka
   * (UnifiedLog.hasOngoingTransaction before AddPartitionsToTxnManager), a
   * later write of a transaction already open in the log is not checked
   * again — but only for a producer verified here as one-shot. A two-phase
   * (KIP-939) producer's transaction may be kept by a recovery producer at
   * any moment, which fences this one while its transaction stays open, and
   * only the coordinator knows: each of its writes is verified (kipgen's
   * deviation; Kafka refuses KeepPreparedTxn altogether). After a restart
   * nothing is remembered, so the first write of each producer is verified.
   */
  async verifyWrite(log: PartitionLog, transactionalId: string | null, producerId: bigint, producerEpoch: number, implicitAdd = false): Promise<void> {
    const open = log.producers.hasOngoingTransaction(producerId, producerEpoch);
    if (open && this.isKnownOneShot(producerId, producerEpoch)) return;
    // With the transaction open in this log the partition was added with its first write: only verify.
    const add = implicitAdd && !open && this.transactionVersion >= 2;
    await this.verify(transactionalId, producerId, producerEpoch, log.topic, log.partition, add);
  }

  /** Whether the producer id + epoch was verified here as not two-phase (its later writes to an open transaction need no check). */
  isKnownOneShot(producerId: bigint, producerEpoch: number): boolean {
    return this.oneShot.get(producerId) === producerEpoch;
  }

  private remember(producerId: bigint, producerEpoch: number, verified: Verified): void {
    if (verified.code !== ErrorCode.NONE) return;
    this.oneShot.delete(producerId);
    if (verified.twoPhase) return;
    this.oneShot.set(producerId, producerEpoch);
    if (this.oneShot.size > ONE_SHOT_CAPACITY) this.oneShot.delete(this.oneShot.keys().next().value!);
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
    const verified = this.tc.isCoordinatorFor(transactionalId)
      ? this.local(transactionalId, this.tc.verify(transactionalId, producerId, producerEpoch, log.topic, log.partition, groupId))
      : await this.verifyRemote(transactionalId, producerId, producerEpoch, log.topic, log.partition, false, groupId);
    this.remember(producerId, producerEpoch, verified);
    const code = verified.code;
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
    let verified: Verified;
    if (!this.tc.isCoordinatorFor(transactionalId)) verified = await this.verifyRemote(transactionalId, producerId, producerEpoch, topic, partition, add);
    else if (add) verified = this.local(transactionalId, await this.tc.addPartitions(transactionalId, producerId, producerEpoch, [{ topic, partition }], 2));
    else verified = this.local(transactionalId, this.tc.verify(transactionalId, producerId, producerEpoch, topic, partition));
    this.remember(producerId, producerEpoch, verified);
    // As Kafka's AddPartitionsToTxnManager: a fenced producer's write is answered INVALID_PRODUCER_EPOCH, which
    // producers expect from a partition leader (Produce, TxnOffsetCommit); PRODUCER_FENCED is the coordinator's word.
    const code = verified.code === ErrorCode.PRODUCER_FENCED ? ErrorCode.INVALID_PRODUCER_EPOCH : verified.code;
    if (code !== ErrorCode.NONE) {
      throw new BrokerError(
        code,
        `${topic}-${partition} is not in the ongoing transaction of ${transactionalId} (producer ${producerId} epoch ${producerEpoch}): ${errorCodeName(code)}`,
      );
    }
  }

  private local(transactionalId: string, code: number): Verified {
    return { code, twoPhase: this.tc.isTwoPhaseTransaction(transactionalId) };
  }

  private async verifyRemote(
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    topic: string,
    partition: number,
    add: boolean,
    shareGroup?: string,
  ): Promise<Verified> {
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
              topics: [
                { name: topic, partitions: [partition] },
                ...(shareGroup === undefined ? [] : [{ name: shareGroupVerifyTopic(shareGroup), partitions: [partition] }]),
                { name: TWO_PHASE_PROBE_TOPIC, partitions: [0] },
              ],
            },
          ],
        }),
        add ? ADD_VERSION : VERIFY_VERSION,
        AddPartitionsToTxnResponse,
      );
      if (response.errorCode !== ErrorCode.NONE) return { code: response.errorCode, twoPhase: true };
      const topics = response.resultsByTransaction[0]?.topicResults ?? [];
      const probe = topics.find((t) => t.name === TWO_PHASE_PROBE_TOPIC)?.resultsByPartition[0];
      const results = topics.filter((t) => t.name !== TWO_PHASE_PROBE_TOPIC).flatMap((t) => t.resultsByPartition);
      if (results.length === 0) return { code: ErrorCode.UNKNOWN_SERVER_ERROR, twoPhase: true };
      const code = results.find((r) => r.partitionErrorCode !== ErrorCode.NONE)?.partitionErrorCode ?? ErrorCode.NONE;
      // No answer to the probe: taken as two-phase, so that every write is verified rather than none.
      return { code, twoPhase: probe === undefined || probe.partitionErrorCode === ErrorCode.NONE };
    } catch {
      // Retriable for the producer, as Kafka answers when its coordinator cannot be reached.
      return { code: ErrorCode.NOT_ENOUGH_REPLICAS, twoPhase: true };
    }
  }
}
