/**
 * The partition-leader side of WriteTxnMarkers: append the COMMIT/ABORT
 * control batch to a local partition (fsynced per the flush settings), then let the coordinator that
 * owns the partition's records act on it — the offset store for
 * `__consumer_offsets`, the share coordinator for `__share_group_state`.
 * Only then is the marker acknowledged, so an acknowledged marker has been
 * both written and applied; one appended but not applied when the process
 * died is applied again by that coordinator's replay at startup.
 *
 * Markers apply once: a marker resent for a transaction this partition has
 * already resolved (the first send was appended, but applying it or the
 * acknowledgement failed) writes no second control batch; it is only applied
 * again, which the offset store and the share coordinator do idempotently.
 */
import type { ShareCoordinator } from '../broker-context.js';
import { CONSUMER_OFFSETS_TOPIC, SHARE_GROUP_STATE_TOPIC } from '../cluster.js';
import { ErrorCode, BrokerError, errorCodeName } from '../errors.js';
import { maybeCrash } from '../faults.js';
import type { OffsetStore } from '../group/offset-store.js';
import type { LogManager } from '../log/log-manager.js';

export interface Marker {
  producerId: bigint;
  producerEpoch: number;
  commit: boolean;
  coordinatorEpoch: number;
}

export class MarkerWriter {
  constructor(
    private readonly logs: LogManager,
    private readonly offsets: OffsetStore,
    private readonly shareCoordinator: () => ShareCoordinator | null,
    private readonly log: (line: string) => void,
  ) {}

  /** Writes one marker to one local partition; returns the Kafka error code for that partition. */
  async write(topic: string, partition: number, marker: Marker): Promise<number> {
    const partitionLog = this.logs.get(topic, partition);
    if (partitionLog === undefined) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    try {
      if (partitionLog.producers.isResentMarker(marker.producerId, marker.producerEpoch, marker.commit)) {
        this.log(`marker for producer ${marker.producerId} epoch ${marker.producerEpoch} on ${topic}-${partition} was already written: applying it again only`);
      } else {
        await partitionLog.appendMarker(marker.producerId, marker.producerEpoch, marker.commit, marker.coordinatorEpoch);
      }
    } catch (error) {
      if (error instanceof BrokerError) {
        this.log(`marker for producer ${marker.producerId} on ${topic}-${partition} refused: ${errorCodeName(error.code)}: ${error.message}`);
        return error.code;
      }
      this.log(`marker for producer ${marker.producerId} on ${topic}-${partition} failed: ${(error as Error).message}`);
      return ErrorCode.KAFKA_STORAGE_ERROR;
    }
    maybeCrash('crash-after-marker-append', this.log);
    if (topic === CONSUMER_OFFSETS_TOPIC) {
      this.offsets.completeTransaction(partition, marker.producerId, marker.commit);
    } else if (topic === SHARE_GROUP_STATE_TOPIC) {
      const share = this.shareCoordinator();
      if (share !== null) {
        try {
          await share.completeTransaction(marker.producerId, marker.producerEpoch, marker.commit);
        } catch (error) {
          // The marker is in the log: the share coordinator's replay applies it at the next start.
          this.log(`share coordinator failed to complete producer ${marker.producerId}: ${(error as Error).message}`);
          return ErrorCode.UNKNOWN_SERVER_ERROR;
        }
      }
    }
    return ErrorCode.NONE;
  }
}
