/**
 * Picks the group membership for `groupProtocol` (Kafka's GroupProtocol:
 * 'classic' builds ClassicKafkaConsumer's ConsumerCoordinator, 'consumer'
 * the KIP-848 AsyncKafkaConsumer's membership manager) and the classic
 * protocol's assignors for `partitionAssignmentStrategy`.
 */
import type { ClusterClient } from '../cluster.js';
import { ConfigError } from '../errors.js';
import type { PartitionAssignor } from './assignors/assignor.js';
import { RangeAssignor } from './assignors/range.js';
import { ClassicMembership } from './classic-membership.js';
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
};

/** Kafka's default strategy, [range, cooperative-sticky]: the names of it this build has. */
const DEFAULT_STRATEGY = ['range', 'cooperative-sticky'];

export function assignorsFor(names: ReadonlyArray<string | PartitionAssignor>): PartitionAssignor[] {
  const isDefault = names.length === DEFAULT_STRATEGY.length && names.every((n, i) => n === DEFAULT_STRATEGY[i]);
  const known = isDefault ? names.filter((n) => typeof n !== 'string' || ASSIGNORS[n]) : names;
  return known.map((name) => {
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
  // KIP-848's membership is built separately (client/consumer/consumer-membership.ts) and wired here when it lands.
  throw new ConfigError("consumer config groupProtocol 'consumer' (KIP-848) is not available in this build; use groupProtocol 'classic'");
}
