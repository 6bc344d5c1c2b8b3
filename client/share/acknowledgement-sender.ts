/**
 * ShareAcknowledge, the acknowledge half of Kafka's ShareConsumeRequestManager
 * (commitSync, commitAsync and close): every pending acknowledgement sent to
 * its partition's leader in the open share session, and on close the final
 * epoch that ends each session. A partition without a known leader or
 * without a session cannot be acknowledged: its records come back when the
 * broker's locks run out.
 */
import { ShareAcknowledgeRequest, ShareAcknowledgeResponse } from '../../generated/index.js';
import { groupBy, type ClusterClient } from '../cluster.js';
import { errorFromCode, Errors, KafkaError } from '../errors.js';
import type { InFlightRecords } from './in-flight-records.js';
import type { ShareMembership } from './membership.js';
import { leaderOf, type ShareSessions } from './session.js';
import { resultKey, type AckResultListener, type AcknowledgementCommitResult } from './types.js';

export interface AcknowledgementSenderParts {
  cluster: ClusterClient;
  membership: ShareMembership;
  sessions: ShareSessions;
  inFlight: InFlightRecords;
  onAckResult: AckResultListener;
}

export class AcknowledgementSender {
  constructor(private readonly parts: AcknowledgementSenderParts) {}

  /**
   * Sends every pending acknowledgement and resolves to the result per
   * partition. `closing` ends the sessions, those without acks too.
   */
  async send(deadline: number, closing: boolean): Promise<AcknowledgementCommitResult> {
    const { cluster, membership, sessions, inFlight } = this.parts;
    const result: AcknowledgementCommitResult = new Map();
    const byNode = groupBy(inFlight.take(() => true).values(), (item) => leaderOf(cluster, item.ref));
    // Sessions without acks are closed too when closing.
    if (closing) for (const node of sessions.nodeIds()) if (!byNode.has(node)) byNode.set(node, []);
    await Promise.all(
      [...byNode].map(async ([nodeId, items]) => {
        const session = sessions.get(nodeId);
        const fail = (error: Error): void => {
          for (const item of items) result.set(resultKey(item.ref), error);
        };
        if (nodeId < 0)
          return fail(
            new KafkaError('the partition has no known leader; acknowledgements dropped (the records will be redelivered)', {
              retriable: true,
            }),
          );
        if (!session || session.isNew) {
          if (items.length > 0)
            fail(
              new KafkaError('no share session with the leader; the acquisition locks were released and the records will be redelivered', {
                code: Errors.SHARE_SESSION_NOT_FOUND,
              }),
            );
          return;
        }
        await sessions.run(nodeId, async (s) => {
          const epoch = s.acknowledgeEpoch(closing);
          const memberEpoch = membership.epoch;
          try {
            const { response } = await cluster.send(
              nodeId,
              ShareAcknowledgeRequest,
              ShareAcknowledgeResponse,
              () =>
                ShareAcknowledgeRequest.create({
                  groupId: membership.groupId,
                  memberId: membership.memberId,
                  shareSessionEpoch: epoch,
                  topics: [...groupBy(items, (item) => item.ref.topicId)].map(([topicId, list]) => ({
                    topicId,
                    partitions: list.map((i) => ({
                      partitionIndex: i.ref.partition,
                      acknowledgementBatches: i.batches,
                    })),
                  })),
                }),
              { deadline, timeoutMs: Math.max(1, deadline - Date.now()) },
            );
            if (response.errorCode !== 0) {
              sessions.onError(nodeId, response.errorCode);
              if (response.errorCode === Errors.UNKNOWN_MEMBER_ID && !closing) membership.rejoinAfterUnknownMember(memberEpoch);
              return fail(errorFromCode(response.errorCode, `ShareAcknowledge to ${cluster.describeNode(nodeId)}`, response.errorMessage));
            }
            s.acknowledged(closing);
            if (closing) sessions.delete(nodeId);
            for (const item of items) {
              const part = response.responses.find((t) => t.topicId === item.ref.topicId)?.partitions.find((p) => p.partitionIndex === item.ref.partition);
              const code = part?.errorCode ?? 0;
              result.set(
                resultKey(item.ref),
                code === 0 ? null : errorFromCode(code, `acknowledging ${item.ref.topic}-${item.ref.partition}`, part?.errorMessage),
              );
            }
          } catch (error) {
            sessions.delete(nodeId);
            fail(error as Error);
          }
        });
      }),
    );
    if (result.size > 0) this.parts.onAckResult(result);
    return result;
  }
}
