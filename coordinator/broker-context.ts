/**
 * The contract between the broker (coordinator/) and the share coordinator
 * (coordinator/share/). The share coordinator is given a BrokerContext and
 * returns a ShareCoordinator; the broker's API definitions (coordinator/apis/
 * 76–79, 96) call its typed operations and shape the answers, and the broker
 * feeds it transaction markers and shows its dump. Keep this file stable: the two sides
 * are built by different people at the same time (coordinator/README.md).
 *
 * Nothing here depends on how the broker is built; only types and small
 * helpers live in this module.
 */
import type { ShareAcknowledgeRequest } from '../generated/ShareAcknowledgeRequest.js';
import type { ShareFetchRequest } from '../generated/ShareFetchRequest.js';
import type { ShareGroupHeartbeatRequest } from '../generated/ShareGroupHeartbeatRequest.js';
import type { TxnShareAcknowledgeRequest } from '../generated/TxnShareAcknowledgeRequest.js';
import type { RecordBatch, TimestampType } from '../runtime/index.js';

// ---------------------------------------------------------------------------
// Requests

/** What a handler learns about the request besides its body. */
export interface RequestContext {
  readonly apiKey: number;
  /** The version the client sent; the handler must answer in the same version. */
  readonly apiVersion: number;
  readonly header: { readonly clientId: string | null; readonly correlationId: number };
  /** Stable for the lifetime of one TCP connection, unique within this process. */
  readonly connectionId: number;
  /** `host:port` of the peer, for logs. */
  readonly peer: string;
  /** Who sent it: `User:<name>` after SASL, the TLS certificate's `User:CN=...`, or `User:ANONYMOUS`. */
  readonly principal?: string;
  /** The client's IP address (ACLs may name hosts). */
  readonly clientHost?: string;
  /** The listener the request arrived on; Metadata and FindCoordinator answer with that listener's ports. */
  readonly listener?: string;
  /**
   * Calls `callback` once when this connection closes (or at once if it is
   * already closed). Share sessions release their locks this way.
   */
  onClose(callback: () => void): void;
}

/**
 * Handles one decoded request body and returns the response body (a plain
 * object as the generated codec's `create` makes). Errors are answered in the
 * response; a thrown BrokerError (coordinator/errors.ts) becomes a top-level
 * error response where the API has one, anything else is logged and closes the
 * connection, as a Kafka broker does for an unexpected failure.
 */
export type Handler = (request: unknown, ctx: RequestContext) => Promise<unknown>;

// ---------------------------------------------------------------------------
// Cluster and topics

export interface NodeEndpoint {
  readonly nodeId: number;
  readonly host: string;
  /** The port of the inter-broker listener (the node's first). */
  readonly port: number;
  /** Ports of the node's other listeners, by listener name. */
  readonly listeners?: Readonly<Record<string, number>>;
}

/** Where a client that came in through `ctx.listener` reaches `node`: the same listener's port on that node. */
export function endpointFor(node: NodeEndpoint, ctx: { readonly listener?: string }): { host: string; port: number } {
  const port = ctx.listener === undefined ? undefined : node.listeners?.[ctx.listener];
  return { host: node.host, port: port ?? node.port };
}

export interface TopicInfo {
  readonly name: string;
  /** Kafka's 22-character base64url uuid; stable across restarts. */
  readonly topicId: string;
  readonly partitions: number;
  /** `__transaction_state`, `__consumer_offsets`, `__share_group_state`. */
  readonly internal: boolean;
  /**
   * The topic's compression.type: 'producer' keeps each batch's codec;
   * anything else is the codec batches are stored in (recompressed on Produce
   * when they differ, as Kafka's LogValidator does).
   */
  readonly compressionType: TopicCompressionType;
  /** compression.gzip.level / compression.zstd.level for that codec; undefined: the codec's default. */
  readonly compressionLevel?: number;
  /**
   * The topic's message.timestamp.type: with LogAppendTime the log stamps every
   * batch it appends with the append time (Kafka's LogValidator).
   */
  readonly messageTimestampType: TimestampType;
  /** The topic's max.message.bytes: the largest record batch Produce accepts (MESSAGE_TOO_LARGE above it). */
  readonly maxMessageBytes: number;
}

/** Kafka's topic-level compression.type values. */
export type TopicCompressionType = 'producer' | 'uncompressed' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
export const TOPIC_COMPRESSION_TYPES: readonly TopicCompressionType[] = ['producer', 'uncompressed', 'gzip', 'snappy', 'lz4', 'zstd'];

export interface ClusterView {
  /** This node. */
  readonly nodeId: number;
  readonly nodes: readonly NodeEndpoint[];
  node(nodeId: number): NodeEndpoint | undefined;
  topics(): readonly TopicInfo[];
  topicByName(name: string): TopicInfo | undefined;
  topicById(topicId: string): TopicInfo | undefined;
  /** The node leading a partition of any topic (static: `nodes[partition % nodes.length]`, see README). */
  leaderOf(topic: string, partition: number): number;
  /**
   * The `__share_group_state` partition holding the share state of
   * `groupId:topicId:partition`: the one led by the data partition's leader
   * (DESIGN §6), so `leaderOf('__share_group_state', p) === leaderOf(topic, partition)`.
   */
  shareStatePartitionFor(topic: string, partition: number): number;
}

// ---------------------------------------------------------------------------
// Partition logs

export type IsolationLevel = 'read_uncommitted' | 'read_committed';

export interface AbortedTransaction {
  readonly producerId: bigint;
  readonly firstOffset: bigint;
}

export interface ReadResult {
  /** Whole RecordBatch v2 batches, raw as stored; empty when there is nothing to read. */
  readonly records: Uint8Array;
  readonly highWatermark: bigint;
  readonly lastStableOffset: bigint;
  readonly logStartOffset: bigint;
  /** Only for read_committed: transactions aborted within the returned range (FetchResponse.AbortedTransactions). */
  readonly abortedTransactions: readonly AbortedTransaction[];
}

/** Read access to one partition this node leads. */
export interface PartitionReader {
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  logStartOffset(): bigint;
  /** Offset of the next record to be appended. */
  logEndOffset(): bigint;
  /** Single replica: equals the log end offset. */
  highWatermark(): bigint;
  /** First offset of the earliest open transaction, else the high watermark. */
  lastStableOffset(): bigint;
  /**
   * Batches from the one containing `fromOffset` (so the first batch may start
   * before it: skip its earlier records), up to `maxBytes`, but always at least
   * one whole batch when one exists, as Kafka does. read_committed stops at the
   * last stable offset. Throws BrokerError OFFSET_OUT_OF_RANGE outside
   * [logStartOffset, logEndOffset].
   */
  read(fromOffset: bigint, maxBytes: number, isolation?: IsolationLevel): ReadResult;
  /** Calls `listener` after every append (for long polls); returns the unsubscribe function. */
  onAppend(listener: () => void): () => void;
}

/** A record for a coordinator log: Kafka's coordinator key/value bytes (see coordinator-record-layout.ts). */
export interface CoordinatorRecord {
  readonly key: Uint8Array;
  /** null is a tombstone. */
  readonly value: Uint8Array | null;
}

/** The producer of a transactional coordinator write (TxnShareAcknowledge carries these). */
export interface TransactionalProducer {
  readonly transactionalId: string;
  readonly producerId: bigint;
  readonly producerEpoch: number;
  /**
   * The share group whose acknowledgements the write carries: the
   * transaction must hold acks for that group (AddShareAcksToTxn), not only
   * the `__share_group_state` partition.
   */
  readonly groupId?: string;
}

export interface AppendResult {
  readonly baseOffset: bigint;
  readonly lastOffset: bigint;
}

/** This node's partition of `__share_group_state` (DESIGN §6: one per node, led by it). */
export interface CoordinatorLog extends PartitionReader {
  /**
   * Appends one batch before resolving (fsynced when the flush settings say so, log/flush.ts). With `transaction`, the
   * batch is transactional: the broker first checks with the transaction
   * coordinator that this partition is in that producer's ongoing transaction
   * (AddShareAcksToTxn added it) and rejects with BrokerError INVALID_TXN_STATE
   * if not, PRODUCER_FENCED / INVALID_PRODUCER_EPOCH for an old epoch. The
   * records stay pending until a COMMIT or ABORT marker, which the broker
   * appends before calling ShareCoordinator.completeTransaction.
   */
  append(records: readonly CoordinatorRecord[], transaction?: TransactionalProducer): Promise<AppendResult>;
  /**
   * Every batch from `fromOffset` (default: the log start) to the end, decoded,
   * control batches (transaction markers) included, in offset order. Used by
   * ShareCoordinator.recover to replay state and resolve pending records.
   */
  batches(fromOffset?: bigint): Iterable<RecordBatch>;
}

// ---------------------------------------------------------------------------
// What the share coordinator receives

/** KIP-932 settings from the broker config, passed through unchanged. */
export interface ShareGroupSettings {
  /** group.share.record.lock.duration.ms */
  readonly recordLockDurationMs: number;
  /** group.share.delivery.count.limit */
  readonly deliveryCountLimit: number;
  /** group.share.session.timeout.ms */
  readonly sessionTimeoutMs: number;
  /** group.share.heartbeat.interval.ms */
  readonly heartbeatIntervalMs: number;
  /** group.share.partition.max.record.locks */
  readonly maxRecordLocks: number;
  /** The broker's default of the share.isolation.level group config (Kafka: read_uncommitted). */
  readonly isolationLevel?: IsolationLevel;
  /** The broker's default of the share.auto.offset.reset group config (Kafka: latest). */
  readonly autoOffsetReset?: 'earliest' | 'latest';
}

/** The KIP-932 group configs set on one share group (IncrementalAlterConfigs on a GROUP resource); absent: not set. */
export interface ShareGroupConfigOverrides {
  readonly isolationLevel?: IsolationLevel;
  readonly autoOffsetReset?: 'earliest' | 'latest';
  readonly recordLockDurationMs?: number;
  readonly deliveryCountLimit?: number;
  readonly sessionTimeoutMs?: number;
  readonly heartbeatIntervalMs?: number;
}

export interface BrokerContext {
  readonly nodeId: number;
  readonly cluster: ClusterView;
  readonly shareGroup: ShareGroupSettings;
  /** Directory the share coordinator may use for files of its own (already created). */
  readonly dataDir: string;
  /** A data partition this node leads, by topic name or topic id; undefined if unknown or led elsewhere. */
  partition(topicNameOrId: string, partition: number): PartitionReader | undefined;
  /** This node's `__share_group_state` partition. */
  readonly shareStateLog: CoordinatorLog;
  /** One line to the broker log (stderr), prefixed with the node id. */
  log(line: string): void;
  /** The group configs set on a share group; read whenever needed, so changes apply at once. Absent: none are ever set. */
  shareGroupConfig?(groupId: string): ShareGroupConfigOverrides;
}

// ---------------------------------------------------------------------------
// The share APIs' operations (Kafka's KafkaApis hands the same work to
// GroupCoordinator.shareGroupHeartbeat / shareGroupDescribe and to
// SharePartitionManager): typed request data in, domain results out; the
// definitions in coordinator/apis/ shape the wire answers.

/** A partition of a share group's topic, by topic id. */
export interface SharePartitionRef {
  readonly topicId: string;
  readonly partition: number;
}

/** How one partition of a request fared. */
export interface SharePartitionResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

/** What a ShareFetch acquired from one partition of its session: the raw batches holding the acquired offsets, and the ranges. */
export interface ShareFetchedPartition extends SharePartitionRef, SharePartitionResult {
  readonly records: Uint8Array | null;
  readonly acquired: readonly { readonly firstOffset: bigint; readonly lastOffset: bigint; readonly deliveryCount: number }[];
}

/** `topicId:partition`: the key of a partition in the acknowledgement results of a ShareFetch. */
export function sharePartitionKey(ref: SharePartitionRef): string {
  return `${ref.topicId}:${ref.partition}`;
}

/**
 * How the broker answers a ShareFetch: made once by its API definition and called
 * by the share coordinator when the request is done, so that the wire answer is
 * built in apis/ without a second promise per request (the hot path).
 */
export interface ShareFetchAnswer<R> {
  /** The whole request failed (bad ids, session, unknown member): nothing acquired. */
  failed(errorCode: number, errorMessage: string, acquisitionLockTimeoutMs: number): R;
  /**
   * `requested`: the partitions the request named, in its order; `acks`: their
   * acknowledgement results by sharePartitionKey; `fetched`: what each session
   * partition acquired or why it failed (empty when the request did not fetch).
   */
  answered(
    requested: readonly SharePartitionRef[],
    acks: ReadonlyMap<string, SharePartitionResult>,
    fetched: readonly ShareFetchedPartition[],
    acquisitionLockTimeoutMs: number,
    ctx: RequestContext,
  ): R;
}

/** How the broker answers a ShareAcknowledge (as ShareFetchAnswer). */
export interface ShareAcknowledgeAnswer<R> {
  failed(errorCode: number, errorMessage: string, acquisitionLockTimeoutMs: number): R;
  /** `partitions`: the request's partitions in its order, `results[i]` the result of `partitions[i]`. */
  answered(partitions: readonly SharePartitionRef[], results: readonly SharePartitionResult[], acquisitionLockTimeoutMs: number, ctx: RequestContext): R;
}

/** The answer to a ShareGroupHeartbeat. */
export interface ShareHeartbeatResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  /** null on a NOT_COORDINATOR answer. */
  readonly memberId: string | null;
  readonly memberEpoch: number;
  readonly heartbeatIntervalMs: number;
  /** The member's assignment when it changed (or on joining), else null. */
  readonly assignment: readonly { readonly topicId: string; readonly partitions: readonly number[] }[] | null;
}

/** One share group as ShareGroupDescribe shows it; `detail` is absent on an error entry. */
export interface ShareGroupDescription {
  readonly groupId: string;
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly groupState: string;
  readonly detail?: {
    readonly groupEpoch: number;
    readonly assignmentEpoch: number;
    readonly assignorName: string;
    readonly members: readonly {
      readonly memberId: string;
      readonly rackId: string | null;
      readonly memberEpoch: number;
      readonly clientId: string;
      readonly clientHost: string;
      readonly subscribedTopicNames: readonly string[];
      readonly assignment: readonly { readonly topicId: string; readonly partitions: readonly number[] }[];
    }[];
  };
}

/** The result of a TxnShareAcknowledge: the top-level error and one result per partition, in the request's order. */
export interface TxnShareAcknowledgeResult {
  readonly errorCode: number;
  readonly partitions: readonly SharePartitionResult[];
}

/** Share-group membership (Kafka: GroupCoordinator.shareGroupHeartbeat, shareGroupDescribe). */
export interface ShareGroupOperations {
  /** Join, stay or leave; `client` is who sent it (clientId, and the address in Kafka's `/host` form). */
  heartbeat(request: ShareGroupHeartbeatRequest, client: { readonly clientId: string; readonly clientHost: string }): Promise<ShareHeartbeatResult>;
  describeGroups(groupIds: readonly string[]): ShareGroupDescription[];
}

/** Share sessions, acquisition and acknowledgement (Kafka: SharePartitionManager). */
export interface SharePartitionOperations {
  shareFetch<R>(request: ShareFetchRequest, ctx: RequestContext, answer: ShareFetchAnswer<R>): Promise<R>;
  shareAcknowledge<R>(request: ShareAcknowledgeRequest, ctx: RequestContext, answer: ShareAcknowledgeAnswer<R>): Promise<R>;
  /**
   * KIP-1289: stores the acknowledgements as pending in the producer's transaction.
   * `memberId`: the member the request names (v1+), or null (v0, or an empty MemberId).
   */
  txnShareAcknowledge(request: TxnShareAcknowledgeRequest, memberId: string | null): Promise<TxnShareAcknowledgeResult>;
}

/** One share partition's answer to an offsets request: an error, or for describe its start offset (-1: never initialized) and lag (-1: unknown). */
export interface ShareOffsetResult extends SharePartitionRef, SharePartitionResult {
  readonly startOffset: bigint;
  readonly lag: bigint;
}

/** The answer to a share-group offsets request: a group-level error, or one result per share partition. */
export interface ShareOffsetsAnswer {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly partitions: readonly ShareOffsetResult[];
}

/** Share-group offsets (Kafka: GroupCoordinator.describeShareGroupOffsets, alterShareGroupOffsets, deleteShareGroupOffsets). */
export interface ShareOffsetOperations {
  /** `partitions` null: every share partition of the group with state. */
  describeOffsets(groupId: string, partitions: readonly SharePartitionRef[] | null): Promise<ShareOffsetsAnswer>;
  /** Re-initializes each share partition at its start offset; the group must have no members. */
  alterOffsets(groupId: string, partitions: readonly (SharePartitionRef & { readonly startOffset: bigint })[]): Promise<ShareOffsetsAnswer>;
  /** Removes the group's state for the topics (one result per partition removed, or per topic on an error, partition -1). */
  deleteOffsets(groupId: string, topicIds: readonly string[]): Promise<ShareOffsetsAnswer>;
}

/**
 * What the share coordinator gives the broker. The share APIs are advertised and
 * dispatched only while a share coordinator offering their operations is
 * registered: ShareGroupHeartbeat and ShareGroupDescribe with `groups`, ShareFetch,
 * ShareAcknowledge and TxnShareAcknowledge (with kip1289 on) with `partitions`,
 * Describe/Alter/DeleteShareGroupOffsets with `offsets`.
 */
export interface ShareCoordinator {
  readonly groups?: ShareGroupOperations;
  readonly partitions?: SharePartitionOperations;
  readonly offsets?: ShareOffsetOperations;
  /** Replays shareStateLog.batches(); called once before the broker serves requests. */
  recover(): Promise<void>;
  /**
   * A COMMIT (commit = true) or ABORT marker for this producer has been
   * appended to shareStateLog: apply or discard its pending acks
   * (DESIGN §5.2). Must be idempotent: after a crash the broker may deliver the
   * same marker again (the coordinator resends until acknowledged).
   */
  completeTransaction(producerId: bigint, producerEpoch: number, commit: boolean): Promise<void>;
  /** The share groups and their states, for ListGroups, DescribeGroups and DeleteGroups (which must not treat them as classic). */
  listGroups?(): { groupId: string; state: string }[];
  /** Human-readable share-partition states for `kipgen dump-log` / debugging. */
  dump(): string;
  close(): Promise<void>;
}

/**
 * The module `coordinator/share/index.ts` exports `createShareCoordinator` of
 * this type; startBroker loads it when present (see broker.ts).
 */
export type ShareCoordinatorFactory = (ctx: BrokerContext) => ShareCoordinator | Promise<ShareCoordinator>;
