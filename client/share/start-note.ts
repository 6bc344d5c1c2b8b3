/**
 * The kafkajs habit a share group breaks: produce, then start a consumer, and
 * expect the records. A share group starts each partition where its
 * share.auto.offset.reset says, and Kafka's default is `latest` (GroupConfig's
 * SHARE_AUTO_OFFSET_RESET_DEFAULT; SharePartition initialises its start offset
 * with offsetForLatestTimestamp), so those records are never delivered and
 * nothing says why. This module builds the one line the share consumer logs
 * when its first fetch brings nothing from partitions that hold records while
 * the group's config is `latest`. Built only then: one DescribeConfigs and one
 * ListOffsets per leader, once per consumer.
 */
import { DescribeConfigsRequest, DescribeConfigsResponse, ListOffsetsRequest, ListOffsetsResponse } from '../../generated/index.js';
import { groupBy, type ClusterClient } from '../cluster.js';
import { NO_LEADER } from './session.js';

/** DescribeConfigs' resource type for a group (KIP-848 / KIP-932 group configs). */
const GROUP_RESOURCE = 32;
const CONFIG = 'share.auto.offset.reset';
const EARLIEST = -2n;
const LATEST = -1n;
/** ListOffsets from a consumer, not a follower (Kafka's ListOffsetsRequest.CONSUMER_REPLICA_ID). */
const CONSUMER_REPLICA_ID = -1;
/** No leader epoch to check against. */
const NO_LEADER_EPOCH = -1;

export interface PartitionOfTopic {
  topic: string;
  partition: number;
}

/**
 * The line to log, or undefined when the group's share.auto.offset.reset is
 * not `latest` or none of `partitions` holds a record.
 */
export async function startAtLogEndNote<P extends PartitionOfTopic>(
  cluster: ClusterClient,
  groupId: string,
  partitions: readonly P[],
  leaderOf: (p: P) => number,
): Promise<string | undefined> {
  const reset = await groupReset(cluster, groupId);
  if (reset !== 'latest') return undefined;
  const holding: string[] = [];
  let records = 0n;
  const byLeader = groupBy(partitions, (p) => leaderOf(p));
  byLeader.delete(NO_LEADER);
  for (const [nodeId, parts] of byLeader) {
    const earliest = await listOffsets(cluster, nodeId, parts, EARLIEST);
    const latest = await listOffsets(cluster, nodeId, parts, LATEST);
    for (const p of parts) {
      const key = `${p.topic}-${p.partition}`;
      const start = earliest.get(key);
      const end = latest.get(key);
      if (start === undefined || end === undefined || end <= start) continue;
      holding.push(key);
      records += end - start;
    }
  }
  if (holding.length === 0) return undefined;
  const shown = holding.length > 4 ? `${holding.slice(0, 4).join(', ')} and ${holding.length - 4} more` : holding.join(', ');
  return (
    `share group ${groupId} has ${CONFIG}=latest (Kafka's default): a new group starts at the log end, so the ${records} record(s) ` +
    `already in ${shown} are not delivered, only records produced from now on. To read from the start, set the group config ` +
    `${CONFIG}=earliest before the group first consumes (IncrementalAlterConfigs on the GROUP resource, e.g. kafka-configs.sh ` +
    `--bootstrap-server <host:port> --alter --entity-type groups --entity-name ${groupId} --add-config ${CONFIG}=earliest; ` +
    `a kipgen broker's default for every group: shareGroup.autoOffsetReset 'earliest')`
  );
}

async function groupReset(cluster: ClusterClient, groupId: string): Promise<string | undefined> {
  const { response } = await cluster.send(cluster.anyNode(), DescribeConfigsRequest, DescribeConfigsResponse, () =>
    DescribeConfigsRequest.create({ resources: [{ resourceType: GROUP_RESOURCE, resourceName: groupId, configurationKeys: [CONFIG] }] }),
  );
  const result = response.results[0];
  if (result === undefined || result.errorCode !== 0) return undefined;
  return result.configs.find((c) => c.name === CONFIG)?.value ?? undefined;
}

async function listOffsets(cluster: ClusterClient, nodeId: number, parts: readonly PartitionOfTopic[], timestamp: bigint): Promise<Map<string, bigint>> {
  const { response } = await cluster.send(nodeId, ListOffsetsRequest, ListOffsetsResponse, () =>
    ListOffsetsRequest.create({
      replicaId: CONSUMER_REPLICA_ID,
      topics: [...groupBy(parts, (p) => p.topic)].map(([name, ps]) => ({
        name,
        partitions: ps.map((p) => ({ partitionIndex: p.partition, currentLeaderEpoch: NO_LEADER_EPOCH, timestamp })),
      })),
    }),
  );
  const offsets = new Map<string, bigint>();
  for (const topic of response.topics) {
    for (const p of topic.partitions) if (p.errorCode === 0 && p.offset >= 0n) offsets.set(`${topic.name}-${p.partitionIndex}`, p.offset);
  }
  return offsets;
}
