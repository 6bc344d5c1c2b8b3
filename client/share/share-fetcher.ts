/**
 * ShareFetch, the fetch half of Kafka's ShareConsumeRequestManager: one
 * request per leader of the assignment (and per session whose node leads
 * none of it any more, to forget its partitions), carrying the pending
 * acknowledgements of that leader's partitions; the answer's records become
 * what poll() delivers, its acknowledgement results go to the commit
 * callback, and its errors reset the session, rejoin the group or refresh
 * the metadata.
 */
import { ShareFetchRequest, ShareFetchResponse } from '../../generated/index.js';
import { NetworkError } from '../../connection/connection.js';
import { groupBy, sleep, type ClusterClient } from '../cluster.js';
import { errorFromCode, Errors, isRetriableCode, UnsupportedVersionError } from '../errors.js';
import type { ShareConsumerRecord } from './acknowledgements.js';
import type { AcknowledgementModeState } from './acknowledgement-mode.js';
import { acquiredRecords } from './completed-fetch.js';
import type { ShareFetchConfig } from './consumer-config.js';
import type { InFlightRecords } from './in-flight-records.js';
import type { ShareMembership } from './membership.js';
import { STALE_METADATA_ERRORS } from './protocol.js';
import { leaderOf, NO_LEADER, type ShareSessions } from './session.js';
import { startAtLogEndNote } from './start-note.js';
import { resultKey, tpKey, type AckResultListener, type AcknowledgementCommitResult, type PartitionAckBatches, type TopicPartitionRef } from './types.js';

export interface ShareFetcherParts {
  cluster: ClusterClient;
  membership: ShareMembership;
  sessions: ShareSessions;
  inFlight: InFlightRecords;
  mode: AcknowledgementModeState;
  config: ShareFetchConfig;
  onAckResult: AckResultListener;
  isClosed: () => boolean;
}

export class ShareFetcher {
  /** Whether the first fetch with an assignment has been looked at (start-note.ts). */
  private firstFetchSeen = false;

  constructor(private readonly parts: ShareFetcherParts) {}

  /** One round of ShareFetch to every leader of the assignment, waiting at most until `deadline`. */
  async fetchOnce(deadline: number): Promise<ShareConsumerRecord[]> {
    const { cluster, membership, sessions, config } = this.parts;
    const byNode = groupBy(membership.assignment, (ref) => Math.max(leaderOf(cluster, ref), NO_LEADER));
    const missingLeader = byNode.delete(NO_LEADER);
    if (missingLeader) await cluster.refreshMetadata(null, deadline).catch(() => {});
    // Sessions with nodes that lead none of our partitions any more: forget their partitions.
    for (const nodeId of sessions.nodeIds()) if (!byNode.has(nodeId)) byNode.set(nodeId, []);
    const maxWait = Math.max(0, Math.min(config.fetchMaxWaitMs, deadline - Date.now()));
    const results = await Promise.all([...byNode].map(([nodeId, refs]) => this.fetchFromNode(nodeId, refs, maxWait)));
    const records = results.flat();
    if (!this.firstFetchSeen && membership.assignment.length > 0) {
      this.firstFetchSeen = true;
      if (records.length === 0) this.noteStartAtLogEnd([...membership.assignment]);
    }
    return records;
  }

  /**
   * The first fetch brought nothing: if the group starts at the log end of
   * partitions that hold records (share.auto.offset.reset=latest, Kafka's
   * default), say so once, naming the config. In the background: poll() does not wait.
   */
  private noteStartAtLogEnd(refs: TopicPartitionRef[]): void {
    const { cluster, membership, isClosed } = this.parts;
    startAtLogEndNote(cluster, membership.groupId, refs, (ref) => leaderOf(cluster, ref)).then(
      (line) => {
        if (line !== undefined && !isClosed()) cluster.logger.warn(`share consumer ${cluster.clientId}: ${line}`);
      },
      (error: Error) => cluster.logger.debug(`share consumer ${cluster.clientId}: checking where the group starts failed: ${error.message}`),
    );
  }

  private async fetchFromNode(nodeId: number, refs: TopicPartitionRef[], maxWaitMs: number): Promise<ShareConsumerRecord[]> {
    const { cluster, membership, sessions, inFlight, mode, config } = this.parts;
    if (mode.configured === 'transactional') {
      try {
        await mode.checkTransactionalSupport(nodeId);
      } catch (error) {
        if (error instanceof UnsupportedVersionError) throw error;
        return [];
      }
    }
    return sessions.run(nodeId, async (session) => {
      const wanted = new Set(refs.map((r) => tpKey(r.topicId, r.partition)));
      const forgotten = session.forgotten(wanted);
      if (refs.length === 0 && session.isNew) return [];
      const isNew = session.isNew;
      const acks: Map<string, PartitionAckBatches> = isNew ? new Map() : inFlight.take((ref) => leaderOf(cluster, ref) === nodeId);
      const toSend = [
        ...refs.map((ref) => ({ ref, batches: acks.get(tpKey(ref.topicId, ref.partition))?.batches ?? [] })),
        // Acks for partitions no longer assigned to us but still led by this node.
        ...[...acks].filter(([key]) => !wanted.has(key)).map(([, item]) => item),
      ];
      const byTopic = groupBy(toSend, (entry) => entry.ref.topicId);
      const forgottenByTopic = groupBy(
        forgotten.map((key) => key.split(':') as [string, string]),
        ([topicId]) => topicId,
      );
      let response: ShareFetchResponse;
      const memberEpoch = membership.epoch;
      try {
        ({ response } = await cluster.send(
          nodeId,
          ShareFetchRequest,
          ShareFetchResponse,
          () =>
            ShareFetchRequest.create({
              groupId: membership.groupId,
              memberId: membership.memberId,
              shareSessionEpoch: session.epoch,
              maxWaitMs,
              minBytes: config.fetchMinBytes,
              maxBytes: config.fetchMaxBytes,
              maxRecords: config.maxPollRecords,
              batchSize: config.maxPollRecords,
              topics: [...byTopic].map(([topicId, entries]) => ({
                topicId,
                partitions: entries.map(({ ref, batches }) => ({
                  partitionIndex: ref.partition,
                  partitionMaxBytes: 0,
                  acknowledgementBatches: batches,
                })),
              })),
              forgottenTopicsData: isNew ? [] : [...forgottenByTopic].map(([topicId, keys]) => ({ topicId, partitions: keys.map(([, p]) => Number(p)) })),
            }),
          { timeoutMs: cluster.requestTimeoutMs + maxWaitMs },
        ));
      } catch (error) {
        // The connection is gone, and with it the session and its locks.
        session.reset();
        this.reportAcks(acks, error as Error);
        if (error instanceof UnsupportedVersionError) throw error;
        if (!(error instanceof NetworkError)) cluster.logger.warn(`ShareFetch to ${cluster.describeNode(nodeId)} failed: ${(error as Error).message}`);
        await sleep(cluster.backoff(1), cluster.closeSignal);
        return [];
      }
      if (response.errorCode !== 0) {
        sessions.onError(nodeId, response.errorCode);
        const error = errorFromCode(response.errorCode, `ShareFetch to ${cluster.describeNode(nodeId)}`, response.errorMessage);
        this.reportAcks(acks, error);
        if (response.errorCode === Errors.UNKNOWN_MEMBER_ID) {
          membership.rejoinAfterUnknownMember(memberEpoch);
          // Still assigned only if a heartbeat already rejoined meanwhile: retry after a short backoff, never spin.
          if (membership.assignment.length > 0) await sleep(cluster.backoff(1), cluster.closeSignal);
          return [];
        }
        if (!isRetriableCode(response.errorCode)) throw error;
        await sleep(cluster.backoff(1), cluster.closeSignal);
        return [];
      }
      session.fetched(wanted);
      return this.completeFetch(response, acks);
    });
  }

  /** A successful ShareFetch answer: its records, and the results of the acknowledgements it carried. */
  private completeFetch(response: ShareFetchResponse, acks: Map<string, PartitionAckBatches>): ShareConsumerRecord[] {
    const { cluster, inFlight, onAckResult } = this.parts;
    const records: ShareConsumerRecord[] = [];
    const ackResult: AcknowledgementCommitResult = new Map();
    for (const topic of response.responses) {
      const meta = cluster.topicById(topic.topicId);
      for (const part of topic.partitions) {
        const ref: TopicPartitionRef = {
          topicId: topic.topicId,
          topic: meta?.name ?? topic.topicId,
          partition: part.partitionIndex,
        };
        if (acks.has(tpKey(ref.topicId, ref.partition))) {
          ackResult.set(
            resultKey(ref),
            part.acknowledgeErrorCode === 0
              ? null
              : errorFromCode(part.acknowledgeErrorCode, `acknowledging ${ref.topic}-${ref.partition}`, part.acknowledgeErrorMessage),
          );
        }
        if (part.errorCode !== 0) {
          if (STALE_METADATA_ERRORS.has(part.errorCode)) {
            cluster.invalidateMetadata();
            void cluster.refreshMetadata(null).catch(() => {});
          } else {
            cluster.logger.warn(`ShareFetch ${ref.topic}-${ref.partition}: ${part.errorMessage ?? part.errorCode}`);
          }
          continue;
        }
        records.push(...acquiredRecords(ref, part.records, part.acquiredRecords, inFlight));
      }
    }
    if (ackResult.size > 0) onAckResult(ackResult);
    return records;
  }

  /** The request carrying `acks` failed as a whole: every partition's acknowledgement failed with `error`. */
  private reportAcks(acks: Map<string, PartitionAckBatches>, error: Error): void {
    if (acks.size === 0) return;
    const result: AcknowledgementCommitResult = new Map();
    for (const { ref } of acks.values()) result.set(resultKey(ref), error);
    this.parts.onAckResult(result);
  }
}
