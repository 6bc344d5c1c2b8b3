/**
 * Admin: Kafka's `Admin` interface, promise-based. A thin face: each method
 * hands off to a module of admin/ that builds the requests, routes them (any
 * broker, the controller, a partition's leader or a group's coordinator, as
 * Kafka's KafkaAdminClient does) and turns the answers into an AdminResult
 * (admin/result.ts), one outcome per entry.
 */
import { ClusterClient } from './cluster.js';
import type { CommonClientConfig } from './cluster/config.js';

import type { AclBinding, AclBindingFilter } from './admin/acl-types.js';
import type { AdminCallOptions } from './admin/call.js';
import type { AlterConfigOp, Config, ConfigResource } from './admin/config-types.js';
import type { AlterConfigsOptions, DescribeConfigsOptions } from './admin/configs.js';
import type { ClusterDescription, DescribeClusterOptions } from './admin/describe-cluster.js';
import type { DescribeTopicsOptions, TopicDescription } from './admin/describe-topics.js';
import type { FilterResult } from './admin/acls.js';
import type { ListOffsetsOptions, ListOffsetsResultInfo, OffsetSpec } from './admin/list-offsets.js';
import type { AdminResult } from './admin/result.js';
import type {
  CreatedTopic,
  CreatePartitionsOptions,
  CreateTopicsOptions,
  ListTopicsOptions,
  NewPartitions,
  NewTopic,
  TopicCollection,
  TopicListing,
} from './admin/topics.js';
import * as acls from './admin/acls.js';
import * as configs from './admin/configs.js';
import * as clusterInfo from './admin/describe-cluster.js';
import * as describing from './admin/describe-topics.js';
import * as offsets from './admin/list-offsets.js';
import * as topics from './admin/topics.js';
import type { TopicPartition } from './consumer/topic-partition.js';

export { AdminResult, type EntryOutcome, type EntryError } from './admin/result.js';

export interface AdminConfig extends CommonClientConfig {
  /** default.api.timeout.ms: how long one Admin call may take in all, retries included. Default 60 000. */
  defaultApiTimeoutMs?: number;
}

export class Admin {
  /** @internal The connections and metadata this Admin's calls go through. */
  readonly cluster: ClusterClient;
  /** @internal */
  readonly defaultApiTimeoutMs: number;

  constructor(config: AdminConfig) {
    this.cluster = new ClusterClient(config, 'adminclient-1');
    this.defaultApiTimeoutMs = config.defaultApiTimeoutMs ?? 60_000;
  }

  // ---------------------------------------------------------------------------
  // Topics, configs, ACLs, cluster and offsets (admin-a): admin/topics.ts,
  // describe-topics.ts, configs.ts, acls.ts, describe-cluster.ts, list-offsets.ts.

  /** Creates topics (Kafka's Admin.createTopics); one entry per topic name. */
  createTopics(newTopics: readonly NewTopic[], options?: CreateTopicsOptions): Promise<AdminResult<string, CreatedTopic>> {
    return topics.createTopics(this, newTopics, options);
  }

  /** Deletes topics by name, or by id with `{ topicIds }` (Kafka's Admin.deleteTopics); one entry per name or id. */
  deleteTopics(names: TopicCollection, options?: AdminCallOptions): Promise<AdminResult<string, void>> {
    return topics.deleteTopics(this, names, options);
  }

  /** Raises topics' partition counts (Kafka's Admin.createPartitions); one entry per topic. */
  createPartitions(
    newPartitions: ReadonlyMap<string, NewPartitions> | Readonly<Record<string, NewPartitions>>,
    options?: CreatePartitionsOptions,
  ): Promise<AdminResult<string, void>> {
    return topics.createPartitions(this, newPartitions, options);
  }

  /** The topics the principal may describe, by name (Kafka's Admin.listTopics → namesToListings). */
  listTopics(options?: ListTopicsOptions): Promise<Map<string, TopicListing>> {
    return topics.listTopics(this, options);
  }

  /** Describes topics by name, or by id with `{ topicIds }` (Kafka's Admin.describeTopics); one entry per name or id. */
  describeTopics(names: TopicCollection, options?: DescribeTopicsOptions): Promise<AdminResult<string, TopicDescription>> {
    return describing.describeTopics(this, names, options);
  }

  /** The configs of topics, brokers, broker loggers and groups (Kafka's Admin.describeConfigs); one entry per resource object given. */
  describeConfigs(resources: readonly ConfigResource[], options?: DescribeConfigsOptions): Promise<AdminResult<ConfigResource, Config>> {
    return configs.describeConfigs(this, resources, options);
  }

  /** SET / DELETE / APPEND / SUBTRACT configs per resource (Kafka's Admin.incrementalAlterConfigs); one entry per resource object given. */
  incrementalAlterConfigs(
    changes: ReadonlyMap<ConfigResource, readonly AlterConfigOp[]> | ReadonlyArray<readonly [ConfigResource, readonly AlterConfigOp[]]>,
    options?: AlterConfigsOptions,
  ): Promise<AdminResult<ConfigResource, void>> {
    return configs.incrementalAlterConfigs(this, changes, options);
  }

  /** Creates ACL bindings (Kafka's Admin.createAcls); one entry per binding object given. */
  createAcls(bindings: readonly AclBinding[], options?: AdminCallOptions): Promise<AdminResult<AclBinding, void>> {
    return acls.createAcls(this, bindings, options);
  }

  /** The ACL bindings a filter matches (Kafka's Admin.describeAcls). */
  describeAcls(filter: AclBindingFilter, options?: AdminCallOptions): Promise<AclBinding[]> {
    return acls.describeAcls(this, filter, options);
  }

  /** Deletes the ACL bindings each filter matches (Kafka's Admin.deleteAcls); one entry per filter, with each binding's own error. */
  deleteAcls(filters: readonly AclBindingFilter[], options?: AdminCallOptions): Promise<AdminResult<AclBindingFilter, FilterResult[]>> {
    return acls.deleteAcls(this, filters, options);
  }

  /** The cluster id, controller, brokers and (when asked) the principal's cluster operations (Kafka's Admin.describeCluster). */
  describeCluster(options?: DescribeClusterOptions): Promise<ClusterDescription> {
    return clusterInfo.describeCluster(this, options);
  }

  /** Offsets by spec, asked of each partition's leader (Kafka's Admin.listOffsets); one entry per partition object given. */
  listOffsets(
    specs: ReadonlyMap<TopicPartition, OffsetSpec> | ReadonlyArray<readonly [TopicPartition, OffsetSpec]>,
    options?: ListOffsetsOptions,
  ): Promise<AdminResult<TopicPartition, ListOffsetsResultInfo>> {
    return offsets.listOffsets(this, specs, options);
  }

  // (end of admin-a's block)
  // ---------------------------------------------------------------------------

  /** Closes the connections; calls in flight reject. */
  async close(): Promise<void> {
    await this.cluster.close();
  }
}
