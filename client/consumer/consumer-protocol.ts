/**
 * The consumer protocol's bytes inside JoinGroup (a member's subscription) and
 * SyncGroup (its assignment), as Kafka's ConsumerProtocol writes them: an
 * int16 version, then the data schema of that version
 * (message-schemas/ConsumerProtocolSubscription.json / ...Assignment.json).
 * A newer version than ours is read with ours, its extra bytes ignored: the
 * schemas only ever append fields (Kafka's ConsumerProtocol does the same).
 */
import { ConsumerProtocolAssignment, ConsumerProtocolSubscription } from '../../generated/index.js';
import { KafkaError } from '../errors.js';
import type { MemberAssignment, MemberSubscription } from './assignors/assignor.js';
import { groupBy } from '../cluster.js';
import type { TopicPartition } from './topic-partition.js';

/** JoinGroup's protocol type for consumers (Kafka's ConsumerProtocol.PROTOCOL_TYPE). */
export const CONSUMER_PROTOCOL_TYPE = 'consumer';
const LATEST_VERSION = 3;

function withVersion(version: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(2 + body.length);
  new DataView(out.buffer).setInt16(0, version);
  out.set(body, 2);
  return out;
}

function readVersion(bytes: Uint8Array, what: string): { version: number; body: Uint8Array } {
  if (bytes.length < 2) throw new KafkaError(`consumer protocol ${what}: ${bytes.length} byte(s), too short for its version`);
  const version = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getInt16(0);
  if (version < 0) throw new KafkaError(`consumer protocol ${what}: unsupported version ${version}`);
  return { version: Math.min(version, LATEST_VERSION), body: bytes.subarray(2) };
}

function byTopic(partitions: readonly TopicPartition[]): Array<{ topic: string; partitions: number[] }> {
  return [...groupBy(partitions, (p) => p.topic)].map(([topic, list]) => ({ topic, partitions: list.map((p) => p.partition) }));
}

function flatten(list: ReadonlyArray<{ topic: string; partitions: number[] }>): TopicPartition[] {
  return list.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition })));
}

export function serializeSubscription(subscription: Omit<MemberSubscription, 'groupInstanceId'>): Uint8Array {
  const message = ConsumerProtocolSubscription.create({
    topics: [...subscription.topics],
    userData: subscription.userData,
    ownedPartitions: byTopic(subscription.ownedPartitions),
    generationId: subscription.generationId,
    rackId: subscription.rackId,
  });
  return withVersion(LATEST_VERSION, ConsumerProtocolSubscription.encode(message, LATEST_VERSION));
}

export function deserializeSubscription(bytes: Uint8Array, groupInstanceId: string | null): MemberSubscription {
  const { version, body } = readVersion(bytes, 'subscription');
  const message = ConsumerProtocolSubscription.decode(body, version, { onTrailingBytes: () => {} });
  return {
    topics: message.topics,
    userData: message.userData,
    ownedPartitions: flatten(message.ownedPartitions),
    groupInstanceId,
    generationId: version >= 2 ? message.generationId : -1,
    rackId: message.rackId,
  };
}

export function serializeAssignment(assignment: MemberAssignment): Uint8Array {
  const message = ConsumerProtocolAssignment.create({ assignedPartitions: byTopic(assignment.partitions), userData: assignment.userData });
  return withVersion(LATEST_VERSION, ConsumerProtocolAssignment.encode(message, LATEST_VERSION));
}

export function deserializeAssignment(bytes: Uint8Array): MemberAssignment {
  // An empty assignment (a member the leader left out, or an error) is no partitions: Kafka's ConsumerCoordinator treats it so.
  if (bytes.length === 0) return { partitions: [], userData: null };
  const { version, body } = readVersion(bytes, 'assignment');
  const message = ConsumerProtocolAssignment.decode(body, version, { onTrailingBytes: () => {} });
  return { partitions: flatten(message.assignedPartitions), userData: message.userData };
}
