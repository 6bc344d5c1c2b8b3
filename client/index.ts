/**
 * kipgen's Kafka client: KafkaProducer (transactions, KIP-1289
 * sendShareAcksToTransaction), KafkaConsumer (classic groups, assign,
 * read_committed), KafkaShareConsumer (KIP-932 share groups with
 * implicit, explicit and transactional acknowledgement), the standalone
 * TransactionalShareAcknowledger, and their types, errors and metrics.
 */
export { KafkaProducer, type CompleteTransactionConfig } from './producer.js';
export type { ProducerConfig, ProducerRecord, RecordMetadata, HeaderValue } from './producer.js';
export type { CompressionType } from '../runtime/index.js';
export { KafkaConsumer, ConsumerRecords, WakeupError } from './kafka-consumer.js';
export type { ConsumerConfig, ConsumerRecord, ConsumerRebalanceListener, OffsetAndMetadata, OffsetCommitCallback, TopicPartition } from './kafka-consumer.js';
export { NoOffsetForPartitionError } from './consumer/fetch-positions.js';
export { OffsetOutOfRangeError } from './consumer/fetcher.js';
export { KafkaShareConsumer } from './share-consumer.js';
export type { ShareConsumerConfig, AcknowledgementMode, AcknowledgementCommitResult, AcknowledgementCommitCallback } from './share-consumer.js';
export { TransactionalShareAcknowledger } from './share/transactional-acknowledger.js';
export type { TransactionalShareAcknowledgerConfig } from './share/transactional-acknowledger.js';
export { ShareAcknowledgements, ShareGroupMetadata, ACKNOWLEDGE_TYPE_CODES } from './share/acknowledgements.js';
export type { AcknowledgeType, ShareAcknowledgementBatch, PartitionAcknowledgements, ShareConsumerRecord, RecordPosition } from './share/acknowledgements.js';
export { TransactionAbortedError, PreparedTxnState } from './transaction-manager.js';
export type { TransactionState, PreparedTransaction, SavedTransactionOutcome, ConsumerGroupMetadata, TopicPartitionOffset } from './transaction-manager.js';
export { murmur2, toPositive, partitionForKey, DefaultPartitioner, roundRobinPartitioner } from './partitioner.js';
export type { Partitioner } from './partitioner.js';
export { CooperativeStickyAssignor, COOPERATIVE_STICKY_ASSIGNOR_NAME } from './consumer/assignors/cooperative-sticky.js';
export { ShareTransactionMetrics, METRIC_NAMES, PROMETHEUS_NAMES } from './metrics.js';
export type { ShareTransactionMetricsSnapshot, HistogramSnapshot } from './metrics.js';
export { Admin, AdminResult } from './admin.js';
export type { AdminConfig, EntryOutcome, EntryError } from './admin.js';
export type { AdminCallOptions } from './admin/call.js';
export type {
  NewTopic,
  CreateTopicsOptions,
  CreatedTopic,
  NewPartitions,
  CreatePartitionsOptions,
  TopicListing,
  ListTopicsOptions,
  TopicCollection,
} from './admin/topics.js';
export type { TopicDescription, TopicPartitionInfo, DescribeTopicsOptions } from './admin/describe-topics.js';
export { Config, CONFIG_RESOURCE_TYPES } from './admin/config-types.js';
export type {
  ConfigResource,
  ConfigResourceType,
  ConfigEntry,
  ConfigSource,
  ConfigSynonym,
  ConfigType,
  AlterConfigOp,
  AlterConfigOpType,
} from './admin/config-types.js';
export type { DescribeConfigsOptions, AlterConfigsOptions } from './admin/configs.js';
export { ANY_ACL_BINDING_FILTER } from './admin/acl-types.js';
export type {
  AclBinding,
  AclBindingFilter,
  AclOperation,
  AclPermissionType,
  AccessControlEntry,
  AccessControlEntryFilter,
  PatternType,
  ResourcePattern,
  ResourcePatternFilter,
  ResourceType,
  Node,
} from './admin/acl-types.js';
export type { FilterResult } from './admin/acls.js';
export type { ClusterDescription, DescribeClusterOptions } from './admin/describe-cluster.js';
export { OffsetSpec } from './admin/list-offsets.js';
export type { ListOffsetsOptions, ListOffsetsResultInfo } from './admin/list-offsets.js';
export {
  TopicExistsError,
  UnknownTopicOrPartitionError,
  UnknownTopicIdError,
  InvalidTopicError,
  InvalidPartitionsError,
  InvalidReplicationFactorError,
  InvalidConfigurationError,
  InvalidRequestError,
  PolicyViolationError,
  SecurityDisabledError,
} from './errors.js';
export { AllBrokersResult } from './admin/per-entry.js';
export type {
  GroupType,
  GroupState,
  GroupListing,
  MemberAssignment,
  MemberDescription,
  ConsumerGroupDescription,
  ShareMemberDescription,
  ShareGroupDescription,
} from './admin/group-types.js';
export type { ListGroupsOptions, DescribeGroupsOptions } from './admin/groups.js';
export type { CommittedOffset, ListConsumerGroupOffsetsSpec, ListConsumerGroupOffsetsOptions } from './admin/group-offsets.js';
export type { SharePartitionOffsetInfo, ListShareGroupOffsetsSpec } from './admin/share-group-offsets.js';
export type {
  TransactionState as AdminTransactionState,
  TransactionDescription,
  TransactionListing,
  ListTransactionsOptions,
  ProducerState,
  PartitionProducerState,
  DescribeProducersOptions,
  AbortTransactionSpec,
} from './admin/transactions.js';
export type { RemoveMembersFromConsumerGroupOptions, ClassicGroupDescription, ClassicMemberDescription } from './admin/membership.js';
export type { FencedProducer } from './admin/fencing.js';
export type { FeatureMetadata, FinalizedVersionRange, SupportedVersionRange } from './admin/features.js';
export { consoleLogger } from './cluster.js';
export type { CommonClientConfig, Logger, SslConfig } from './cluster.js';
export type { SaslConfig, SaslMechanismName, OAuthBearerToken } from './sasl/mechanisms.js';
export {
  KafkaError,
  ApiError,
  ProducerFencedError,
  InvalidProducerEpochError,
  InvalidTxnStateError,
  TransactionAbortableError,
  CommitFailedError,
  InvalidRecordStateError,
  OutOfOrderSequenceError,
  UnsupportedVersionError,
  KafkaTimeoutError,
  IllegalStateError,
  ClientClosedError,
  ConfigError,
  SaslAuthenticationError,
  AuthorizationError,
  TopicAuthorizationError,
  GroupAuthorizationError,
  TransactionalIdAuthorizationError,
  ClusterAuthorizationError,
  TlsHandshakeError,
  NetworkError,
  RequestTimeoutError,
} from './errors.js';
