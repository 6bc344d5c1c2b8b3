/**
 * DescribeShareGroupOffsets (key 90, v0-1, KIP-932; Lag from v1, KIP-1226): each share partition's start
 * offset, and its lag, per group (Admin's listShareGroupOffsets).
 *
 * Kafka: KafkaApis.handleDescribeShareGroupOffsetsRequest, GroupCoordinatorService.describeShareGroupOffsets /
 * describeShareGroupAllOffsets. Served while the registered share coordinator offers its offset operations;
 * the behaviour is coordinator/share/share-group-offsets.ts.
 * - Topics null: every share partition of the group with state, of topics that still exist.
 * - A topic that does not exist is answered with topic id zero and start offset -1 on each partition, after
 *   the others, as Kafka treats it as no data rather than an error; so is a group that does not exist.
 * - LeaderEpoch is 0: kipgen's share state records one leader epoch, 0.
 * Rule: DESCRIBE on each group (a denied one GROUP_AUTHORIZATION_FAILED); DESCRIBE on each topic: a named
 * topic denied is answered TOPIC_AUTHORIZATION_FAILED on each partition, after the rest, unless the group
 * failed; with topics null a denied topic is left out.
 */
import { ZERO_UUID } from '../../runtime/index.js';
import { DescribeShareGroupOffsetsRequest, type DescribeShareGroupOffsetsRequestGroup } from '../../generated/DescribeShareGroupOffsetsRequest.js';
import {
  DescribeShareGroupOffsetsResponse,
  type DescribeShareGroupOffsetsResponseGroup,
  type DescribeShareGroupOffsetsResponseTopic,
} from '../../generated/DescribeShareGroupOffsetsResponse.js';
import { AclOperation as Op, ResourceType as Res } from '../auth/acl.js';
import type { ShareOffsetOperations } from '../broker-context.js';
import type { Cluster } from '../cluster.js';
import { ErrorCode } from '../errors.js';
import { defineApi } from './define.js';

const errorGroup = (groupId: string, errorCode: number, errorMessage: string | null): DescribeShareGroupOffsetsResponseGroup => ({
  groupId,
  topics: [],
  errorCode,
  errorMessage,
});

const partitionAnswer = (partitionIndex: number, errorCode: number, errorMessage: string | null) => ({
  partitionIndex,
  startOffset: -1n,
  leaderEpoch: 0,
  lag: -1n,
  errorCode,
  errorMessage,
});

async function describeGroup(
  offsets: ShareOffsetOperations,
  cluster: Cluster,
  group: DescribeShareGroupOffsetsRequestGroup,
): Promise<DescribeShareGroupOffsetsResponseGroup> {
  const known = (group.topics ?? []).flatMap((t) => {
    const info = cluster.topicByName(t.topicName);
    return info === undefined || info.internal ? [] : [{ name: t.topicName, topicId: info.topicId, partitions: t.partitions }];
  });
  const refs = group.topics === null ? null : known.flatMap((t) => t.partitions.map((partition) => ({ topicId: t.topicId, partition })));
  const answer = await offsets.describeOffsets(group.groupId, refs);
  if (answer.errorCode !== ErrorCode.NONE) return errorGroup(group.groupId, answer.errorCode, answer.errorMessage);
  const topics = new Map<string, DescribeShareGroupOffsetsResponseTopic>();
  for (const p of answer.partitions) {
    let topic = topics.get(p.topicId);
    if (topic === undefined) topics.set(p.topicId, (topic = { topicName: cluster.topicById(p.topicId)?.name ?? '', topicId: p.topicId, partitions: [] }));
    topic.partitions.push({
      partitionIndex: p.partition,
      startOffset: p.startOffset,
      leaderEpoch: 0,
      lag: p.lag,
      errorCode: p.errorCode,
      errorMessage: p.errorMessage,
    });
  }
  const missing = (group.topics ?? []).filter((t) => !known.some((k) => k.name === t.topicName));
  return {
    groupId: group.groupId,
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    topics: [
      ...topics.values(),
      ...missing.map((t) => ({ topicName: t.topicName, topicId: ZERO_UUID, partitions: t.partitions.map((p) => partitionAnswer(p, ErrorCode.NONE, null)) })),
    ],
  };
}

export default defineApi({
  request: DescribeShareGroupOffsetsRequest,
  response: DescribeShareGroupOffsetsResponse,
  needsShare: 'offsets',
  authorize: async (request, check, _ctx, next) => {
    const allowedGroup = request.groups.map((g) => check.allow(Res.GROUP, g.groupId, Op.DESCRIBE));
    const deniedTopics = request.groups.map((g) => (g.topics ?? []).filter((t) => !check.allow(Res.TOPIC, t.topicName, Op.DESCRIBE)));
    const kept = request.groups
      .map((g, i) => (g.topics === null ? g : { ...g, topics: g.topics.filter((t) => !deniedTopics[i]!.includes(t)) }))
      .filter((_, i) => allowedGroup[i]);
    const response = await next({ ...request, groups: kept });
    const answered = [...response.groups];
    response.groups = request.groups.map((g, i) => {
      if (!allowedGroup[i]) return errorGroup(g.groupId, ErrorCode.GROUP_AUTHORIZATION_FAILED, 'not authorized');
      const group = answered.shift()!;
      if (group.errorCode !== ErrorCode.NONE) return group;
      if (g.topics === null) return { ...group, topics: group.topics.filter((t) => check.allow(Res.TOPIC, t.topicName, Op.DESCRIBE)) };
      const denied = deniedTopics[i]!.map((t) => ({
        topicName: t.topicName,
        topicId: ZERO_UUID,
        partitions: t.partitions.map((p) => partitionAnswer(p, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'not authorized')),
      }));
      return { ...group, topics: [...group.topics, ...denied] };
    });
    return response;
  },
  handler:
    ({ share, cluster }) =>
    async (request) => {
      const offsets = share()?.offsets;
      if (offsets === undefined) throw new Error('DescribeShareGroupOffsets is served only with a share coordinator');
      const groups: DescribeShareGroupOffsetsResponseGroup[] = [];
      for (const group of request.groups) {
        // An empty topic list asks for nothing (KafkaApis answers the group at once).
        groups.push(
          group.topics !== null && group.topics.length === 0 ? errorGroup(group.groupId, ErrorCode.NONE, null) : await describeGroup(offsets, cluster, group),
        );
      }
      return DescribeShareGroupOffsetsResponse.create({ groups });
    },
});
