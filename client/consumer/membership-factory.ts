/**
 * Picks the group membership for `groupProtocol` (Kafka's GroupProtocol:
 * 'classic' builds ClassicKafkaConsumer's ConsumerCoordinator, 'consumer'
 * the KIP-848 AsyncKafkaConsumer's membership manager) and the classic
 * protocol's assignors for `partitionAssignmentStrategy`.
 */
import type { ClusterClient } from '../cluster.js';
import { ConfigError } from '../errors.js';
import type { PartitionAssignor } from './assignors/assignor.js';
import { CooperativeStickyAssignor } from './assignors/cooperative-sticky.js';
import { RangeAssignor } from './assignors/range.js';
import { ClassicMembership } from './classic-membership.js';
import { ConsumerMembershipManager } from './consumer-membership.js';
import type { ResolvedConsumerConfig } from './config.js';
import type { ConsumerMembership, MembershipHooks } from './membership.js';

export interface MembershipContext {
  cluster: ClusterClient;
  config: ResolvedConsumerConfig;
  hooks: MembershipHooks;
}

/** The assignors by the names partition.assignment.strategy uses (Kafka's short names). */
const ASSIGNORS: Record<string, () => PartitionAssignor> = {
  range: () => new RangeAssignor(),
  'cooperative-sticky': () => new CooperativeStickyAssignor(),
};

export function assignorsFor(names: ReadonlyArray<string | PartitionAssignor>): PartitionAssignor[] {
  return names.map((name) => {
    if (typeof name !== 'string') return name;
    const make = ASSIGNORS[name];
    if (!make)
      throw new ConfigError(`consumer config partitionAssignmentStrategy names an unknown assignor '${name}' (known: ${Object.keys(ASSIGNORS).join(', ')})`);
    return make();
  });
}

export function createMembership(context: MembershipContext): ConsumerMembership {
  const { config } = context;
  if (config.groupId === null) throw new ConfigError('subscribe() needs a groupId in the consumer config');
  if (config.groupProtocol === 'classic') return new ClassicMembership(context, assignorsFor(config.partitionAssignmentStrategy));
  // KIP-848: the broker assigns; partitionAssignmentStrategy is a classic-protocol setting and is not used here.
  return new ConsumerMembershipManager(
    context.cluster,
    {
      groupId: config.groupId,
      groupInstanceId: config.groupInstanceId,
      rackId: config.clientRack,
      serverAssignor: config.groupRemoteAssignor,
      rebalanceTimeoutMs: config.maxPollIntervalMs,
    },
    context.hooks,
  );
}
