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

import {
  alterConsumerGroupOffsets,
  deleteConsumerGroupOffsets,
  listConsumerGroupOffsets,
  type CommittedOffset,
  type ListConsumerGroupOffsetsOptions,
  type ListConsumerGroupOffsetsSpec,
  type OffsetAndMetadata,
} from './admin/group-offsets.js';
import type { ConsumerGroupDescription, GroupListing, ShareGroupDescription } from './admin/group-types.js';
import {
  deleteConsumerGroups,
  describeConsumerGroups,
  describeShareGroups,
  listGroups,
  type DescribeGroupsOptions,
  type ListGroupsOptions,
} from './admin/groups.js';
import type { AllBrokersResult } from './admin/per-entry.js';
import {
  alterShareGroupOffsets,
  deleteShareGroupOffsets,
  listShareGroupOffsets,
  type ListShareGroupOffsetsSpec,
  type SharePartitionOffsetInfo,
} from './admin/share-group-offsets.js';
import {
  abortTransaction,
  describeProducers,
  describeTransactions,
  listTransactions,
  type AbortTransactionSpec,
  type DescribeProducersOptions,
  type ListTransactionsOptions,
  type PartitionProducerState,
  type TransactionDescription,
  type TransactionListing,
} from './admin/transactions.js';

import { describeFeatures, type FeatureMetadata } from './admin/features.js';
import { fenceProducers, forceTerminateTransaction, type FencedProducer } from './admin/fencing.js';
import {
  describeClassicGroups,
  removeMembersFromConsumerGroup,
  type ClassicGroupDescription,
  type RemoveMembersFromConsumerGroupOptions,
} from './admin/membership.js';

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

  // Groups, offsets and transactions

  /** Every group of every broker, filtered by type, state and protocol type (Kafka's listGroups). */
  listGroups(options?: ListGroupsOptions): Promise<AllBrokersResult<GroupListing>> {
    return listGroups(this, options);
  }

  /** Consumer groups, KIP-848 (ConsumerGroupDescribe) or classic (DescribeGroups), one outcome per group. */
  describeConsumerGroups(groupIds: readonly string[], options?: DescribeGroupsOptions): Promise<AdminResult<string, ConsumerGroupDescription>> {
    return describeConsumerGroups(this, groupIds, options);
  }

  /** Share groups (ShareGroupDescribe), one outcome per group. */
  describeShareGroups(groupIds: readonly string[], options?: DescribeGroupsOptions): Promise<AdminResult<string, ShareGroupDescription>> {
    return describeShareGroups(this, groupIds, options);
  }

  /** Deletes empty consumer groups and their offsets (DeleteGroups), one outcome per group. */
  deleteConsumerGroups(groupIds: readonly string[], options?: AdminCallOptions): Promise<AdminResult<string, void>> {
    return deleteConsumerGroups(this, groupIds, options);
  }

  /** Committed offsets per group (OffsetFetch), keyed by `topic-partition`; null where the group has none. */
  listConsumerGroupOffsets(
    groups: string | readonly string[] | Readonly<Record<string, ListConsumerGroupOffsetsSpec>>,
    options?: ListConsumerGroupOffsetsOptions,
  ): Promise<AdminResult<string, Map<string, CommittedOffset>>> {
    return listConsumerGroupOffsets(this, groups, options);
  }

  /** Commits offsets for a group from outside it (the group must have no members), one outcome per `topic-partition`. */
  alterConsumerGroupOffsets(
    groupId: string,
    offsets: ReadonlyArray<TopicPartition & OffsetAndMetadata>,
    options?: AdminCallOptions,
  ): Promise<AdminResult<string, void>> {
    return alterConsumerGroupOffsets(this, groupId, offsets, options);
  }

  /** Deletes a group's offsets for some partitions (OffsetDelete), one outcome per `topic-partition`. */
  deleteConsumerGroupOffsets(groupId: string, partitions: readonly TopicPartition[], options?: AdminCallOptions): Promise<AdminResult<string, void>> {
    return deleteConsumerGroupOffsets(this, groupId, partitions, options);
  }

  /** Share groups' start offsets per partition (DescribeShareGroupOffsets, KIP-932), keyed by `topic-partition`; null where none. */
  listShareGroupOffsets(
    groups: string | readonly string[] | Readonly<Record<string, ListShareGroupOffsetsSpec>>,
    options?: AdminCallOptions,
  ): Promise<AdminResult<string, Map<string, SharePartitionOffsetInfo | null>>> {
    return listShareGroupOffsets(this, groups, options);
  }

  /** listShareGroupOffsets under the name of the API it sends (DescribeShareGroupOffsets). */
  describeShareGroupOffsets(
    groups: string | readonly string[] | Readonly<Record<string, ListShareGroupOffsetsSpec>>,
    options?: AdminCallOptions,
  ): Promise<AdminResult<string, Map<string, SharePartitionOffsetInfo | null>>> {
    return listShareGroupOffsets(this, groups, options);
  }

  /** Sets the start offsets of an empty share group (AlterShareGroupOffsets), one outcome per `topic-partition`. */
  alterShareGroupOffsets(
    groupId: string,
    offsets: ReadonlyArray<TopicPartition & { offset: bigint }>,
    options?: AdminCallOptions,
  ): Promise<AdminResult<string, void>> {
    return alterShareGroupOffsets(this, groupId, offsets, options);
  }

  /** Removes an empty share group's state for whole topics (DeleteShareGroupOffsets), one outcome per topic. */
  deleteShareGroupOffsets(groupId: string, topics: readonly string[], options?: AdminCallOptions): Promise<AdminResult<string, void>> {
    return deleteShareGroupOffsets(this, groupId, topics, options);
  }

  /** The coordinator's view of transactional ids (KIP-664; also KIP-939 recovery), one outcome per id. */
  describeTransactions(transactionalIds: readonly string[], options?: AdminCallOptions): Promise<AdminResult<string, TransactionDescription>> {
    return describeTransactions(this, transactionalIds, options);
  }

  /** The transactional ids of every broker's coordinator, filtered (KIP-664, KIP-994, KIP-1152). */
  listTransactions(options?: ListTransactionsOptions): Promise<AllBrokersResult<TransactionListing>> {
    return listTransactions(this, options);
  }

  /** Each partition's producers and open transactions (KIP-664), keyed by `topic-partition`. */
  describeProducers(partitions: readonly TopicPartition[], options?: DescribeProducersOptions): Promise<AdminResult<string, PartitionProducerState>> {
    return describeProducers(this, partitions, options);
  }

  /** Aborts a hanging transaction on one partition (KIP-664): an ABORT marker written by the partition's leader. */
  abortTransaction(spec: AbortTransactionSpec, options?: AdminCallOptions): Promise<void> {
    return abortTransaction(this, spec, options);
  }

  // Membership, fencing and features

  /** Removes static members by group.instance.id, or every member when none is named (LeaveGroup); one outcome per member. */
  removeMembersFromConsumerGroup(groupId: string, options?: RemoveMembersFromConsumerGroupOptions): Promise<AdminResult<string, void>> {
    return removeMembersFromConsumerGroup(this, groupId, options);
  }

  /** Classic groups of any protocol type (DescribeGroups; Kafka 4's describeClassicGroups), one outcome per group. */
  describeClassicGroups(groupIds: readonly string[], options?: DescribeGroupsOptions): Promise<AdminResult<string, ClassicGroupDescription>> {
    return describeClassicGroups(this, groupIds, options);
  }

  /** Fences the producers of transactional ids by bumping their epochs (InitProducerId), aborting their open transactions; one outcome per id. */
  fenceProducers(transactionalIds: readonly string[], options?: AdminCallOptions): Promise<AdminResult<string, FencedProducer>> {
    return fenceProducers(this, transactionalIds, options);
  }

  /** Aborts a transactional id's transaction, a prepared two-phase one included (KIP-939), by fencing its producer. */
  forceTerminateTransaction(transactionalId: string, options?: AdminCallOptions): Promise<void> {
    return forceTerminateTransaction(this, transactionalId, options);
  }

  /** The cluster's finalized feature levels and a broker's supported ranges (ApiVersions). */
  describeFeatures(options?: AdminCallOptions): Promise<FeatureMetadata> {
    return describeFeatures(this, options);
  }

  /** Closes the connections; calls in flight reject. */
  async close(): Promise<void> {
    await this.cluster.close();
  }
}
