/**
 * OffsetDelete (key 47): removes a group's committed offsets for some
 * partitions, leaving the group and its other offsets (Admin's
 * deleteConsumerGroupOffsets).
 *
 * Kafka: KafkaApis.handleOffsetDeleteRequest, OffsetMetadataManager.deleteOffsets,
 * ClassicGroup.validateOffsetDelete / isSubscribedToTopic, ConsumerGroup.validateOffsetDelete.
 * - An unknown group (no members, no offsets, no metadata) is GROUP_ID_NOT_FOUND; a
 *   classic group with members that is not a `consumer` group is NON_EMPTY_GROUP.
 * - A topic the group consumes (a KIP-848 member subscribes to it, or a member of a
 *   classic `consumer` group names it in its subscription) is GROUP_SUBSCRIBED_TO_TOPIC
 *   on each of its partitions; the others are answered NONE, with a tombstone for each
 *   one that had an offset, committed or pending.
 * - A topic that does not exist, or a partition it lacks, is UNKNOWN_TOPIC_OR_PARTITION.
 * - A share group's offsets are not consumer offsets: it is GROUP_ID_NOT_FOUND, as
 *   Kafka's groupMetadataManager.group finds no classic or consumer group.
 * Rule: DELETE on the group (else the whole answer is GROUP_AUTHORIZATION_FAILED),
 * READ on each topic (a denied topic's partitions are TOPIC_AUTHORIZATION_FAILED).
 */
import { OffsetDeleteRequest, type OffsetDeleteRequestTopic } from '../../generated/OffsetDeleteRequest.js';
import { OffsetDeleteResponse, type OffsetDeleteResponseTopic } from '../../generated/OffsetDeleteResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import { requirePermission } from '../auth/rule-kit.js';
import { BrokerError, ErrorCode } from '../errors.js';
import type { ClassicGroups } from '../group/classic-groups.js';
import type { ConsumerGroups } from '../group/consumer-groups.js';
import { subscribedTopics } from '../group/consumer-protocol.js';
import type { OffsetStore } from '../group/offset-store.js';
import { defineApi } from './define.js';

const answer = (topic: OffsetDeleteRequestTopic, errorCode: number): OffsetDeleteResponseTopic => ({
  name: topic.name,
  partitions: topic.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })),
});

/** Whether the group still consumes `topic`; throws the group-level error (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP). */
function consumesTopic(groupId: string, store: OffsetStore, classic: ClassicGroups, consumer: ConsumerGroups): (topic: string) => boolean {
  const modern = consumer.get(groupId);
  if (modern !== undefined && (modern.members.size > 0 || classic.get(groupId) === undefined)) {
    return (topic) => [...modern.members.values()].some((m) => m.subscribed.includes(topic));
  }
  const group = classic.get(groupId);
  if (group !== undefined && group.state !== 'Dead') {
    if (group.members.size === 0) return () => false;
    if (group.protocolType !== 'consumer') throw new BrokerError(ErrorCode.NON_EMPTY_GROUP, `group ${groupId} has members and is not a consumer group`);
    const topics = new Set<string>();
    for (const member of group.members.values()) for (const t of subscribedTopics(group.metadataOf(member)) ?? []) topics.add(t);
    return (topic) => topics.has(topic);
  }
  if (store.hasOffsets(groupId) || store.groupMetadata(groupId) !== undefined) return () => false;
  throw new BrokerError(ErrorCode.GROUP_ID_NOT_FOUND, `group ${groupId} does not exist`);
}

export default defineApi({
  request: OffsetDeleteRequest,
  response: OffsetDeleteResponse,
  authorize: async (request, check, _ctx, next) => {
    requirePermission(check, Res.GROUP, request.groupId, Op.DELETE, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    const denied = request.topics.filter((t) => !check.allow(Res.TOPIC, t.name, Op.READ));
    if (denied.length === 0) return next(request);
    const kept = request.topics.filter((t) => !denied.includes(t));
    const response = await next({ ...request, topics: kept });
    // Answered before the coordinator's, as KafkaApis' responseBuilder does.
    response.topics.unshift(...denied.map((t) => answer(t, ErrorCode.TOPIC_AUTHORIZATION_FAILED)));
    return response;
  },
  handler:
    ({ cluster, offsets: store, classicGroups, consumerGroups }) =>
    async (request) => {
      const { groupId } = request;
      const coordinatorError = store.coordinatorError(groupId);
      if (coordinatorError !== ErrorCode.NONE) return OffsetDeleteResponse.create({ errorCode: coordinatorError });
      // One entry per topic, in Kafka's order: the unknown topics and partitions first (KafkaApis answers them before
      // the coordinator), then the coordinator's answers merged into them.
      const topics = new Map<string, OffsetDeleteResponseTopic>();
      const add = (name: string, partitionIndex: number, errorCode: number): void => {
        let topic = topics.get(name);
        if (topic === undefined) topics.set(name, (topic = { name, partitions: [] }));
        topic.partitions.push({ partitionIndex, errorCode });
      };
      const valid: OffsetDeleteRequestTopic[] = [];
      for (const topic of request.topics) {
        const info = cluster.topicByName(topic.name);
        const exists = (p: { partitionIndex: number }): boolean => info !== undefined && p.partitionIndex >= 0 && p.partitionIndex < info.partitions;
        for (const p of topic.partitions) if (!exists(p)) add(topic.name, p.partitionIndex, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        const kept = topic.partitions.filter(exists);
        if (kept.length > 0) valid.push({ ...topic, partitions: kept });
      }
      let consumes: (topic: string) => boolean;
      try {
        consumes = consumesTopic(groupId, store, classicGroups, consumerGroups);
      } catch (error) {
        if (error instanceof BrokerError) return OffsetDeleteResponse.create({ errorCode: error.code });
        throw error;
      }
      const toDelete: { topic: string; partition: number }[] = [];
      for (const topic of valid) {
        const subscribed = consumes(topic.name);
        for (const p of topic.partitions) {
          add(topic.name, p.partitionIndex, subscribed ? ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC : ErrorCode.NONE);
          if (!subscribed) toDelete.push({ topic: topic.name, partition: p.partitionIndex });
        }
      }
      await store.deleteOffsets(groupId, toDelete);
      return OffsetDeleteResponse.create({ errorCode: ErrorCode.NONE, topics: [...topics.values()] });
    },
});
