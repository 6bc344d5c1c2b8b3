/**
 * The broker's parts an API handler may use, assembled once by startBroker
 * (broker.ts). Handlers receive this and nothing else, so what an API touches is
 * visible in its definition.
 */
import type { TopicAdmin } from '../admin/topic-admin.js';
import type { GroupConfigs } from '../admin/group-configs.js';
import type { AclAuthorizer } from '../auth/authorizer.js';
import type { RequestContext, ShareCoordinator } from '../broker-context.js';
import type { Cluster } from '../cluster.js';
import type { BrokerConfig } from '../config.js';
import type { ClassicGroups } from '../group/classic-groups.js';
import type { ConsumerGroups } from '../group/consumer-groups.js';
import type { OffsetStore } from '../group/offset-store.js';
import type { LogManager } from '../log/log-manager.js';
import type { MarkerWriter } from '../txn/marker-writer.js';
import type { TransactionCoordinator } from '../txn/transaction-coordinator.js';
import type { TransactionVerifier } from '../txn/verifier.js';

/**
 * Creates a topic a Metadata request names when it does not exist
 * (auto.create.topics.enable); null when the topic now exists, or the error
 * for that topic.
 */
export type AutoCreate = (name: string, ctx: RequestContext) => Promise<{ error: number; message: string } | null>;

/** An API this broker serves, in the range it serves: what ApiVersions advertises. */
export interface ServedRange {
  readonly apiKey: number;
  readonly minVersion: number;
  readonly maxVersion: number;
}

export interface BrokerServices {
  readonly config: BrokerConfig;
  readonly cluster: Cluster;
  readonly logs: LogManager;
  readonly verifier: TransactionVerifier;
  readonly transactions: TransactionCoordinator;
  readonly markerWriter: MarkerWriter;
  readonly offsets: OffsetStore;
  readonly classicGroups: ClassicGroups;
  readonly consumerGroups: ConsumerGroups;
  readonly groupConfigs: GroupConfigs;
  readonly topicAdmin: TopicAdmin;
  /** Null when the broker runs without ACLs. */
  readonly authorizer: AclAuthorizer | null;
  /** Metadata's topic auto-creation (auto.create.topics.enable), with its CREATE check; absent when off. */
  readonly autoCreate: AutoCreate | undefined;
  /** The share coordinator, once registered (null before, or when the broker runs without one). */
  share(): ShareCoordinator | null;
  /** Every API served, sorted by key: ApiVersions' answer. */
  served(): ServedRange[];
  readonly log: (line: string) => void;
}
