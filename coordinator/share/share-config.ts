/**
 * Settings of the share coordinator. Names and defaults are Kafka's
 * (shared/kafka-facts/semantics.md); the last group are kipgen's own choices.
 */
export interface ShareConfig {
  /** group.share.delivery.count.limit: a record delivered this many times is archived instead of released (Kafka: 2–10). */
  deliveryCountLimit: number;
  /** group.share.record.lock.duration.ms: how long an acquired record stays locked to its member. */
  recordLockDurationMs: number;
  /**
   * group.share.partition.max.record.locks: the most in-flight records (start
   * offset to end offset) a share partition tracks; fetches stop acquiring new
   * offsets beyond it until the start offset moves.
   */
  maxRecordLocks: number;
  /** share.coordinator.snapshot.update.records.per.snapshot: ShareUpdates between two ShareSnapshots of a share partition. */
  snapshotUpdateRecords: number;
  /** group.share.heartbeat.interval.ms */
  heartbeatIntervalMs: number;
  /** group.share.session.timeout.ms: a member silent this long is removed and its locks released. */
  sessionTimeoutMs: number;
  /** group.share.max.share.sessions: share sessions per broker. */
  maxShareSessions: number;

  /**
   * Where a share partition starts when its group first fetches from it:
   * Kafka's share.auto.offset.reset group config, which defaults to 'latest'.
   * kipgen defaults to 'earliest' because it has no group-config API to change
   * it, and records produced before the first fetch would otherwise never be
   * delivered.
   */
  autoOffsetReset: 'earliest' | 'latest';
  /**
   * Which records a share fetch delivers: Kafka's share.isolation.level group
   * config (default read_uncommitted). kipgen's share coordinator defaults to
   * read_committed on its own; the broker passes its configured default
   * (shareGroup.isolationLevel, Kafka's by default), and a group's config
   * overrides both.
   */
  isolationLevel: 'read_committed' | 'read_uncommitted';
  /** Records acquired per ShareFetch when the request's MaxRecords is 0 or less (the client's max.poll.records default). */
  defaultMaxRecords: number;
  /**
   * Upper bound on how long a ShareFetch that found nothing waits for data
   * (the request's MaxWaitMs, capped here so that a slow poll cannot hold a
   * connection's response queue for long).
   */
  maxFetchWaitMs: number;
  /** How often the background task expires locks and silent members. */
  housekeepingIntervalMs: number;
}

export const DEFAULT_SHARE_CONFIG: Readonly<ShareConfig> = Object.freeze({
  deliveryCountLimit: 5,
  recordLockDurationMs: 30_000,
  maxRecordLocks: 200,
  snapshotUpdateRecords: 500,
  heartbeatIntervalMs: 5_000,
  sessionTimeoutMs: 45_000,
  maxShareSessions: 1_000,
  autoOffsetReset: 'earliest',
  isolationLevel: 'read_committed',
  defaultMaxRecords: 500,
  maxFetchWaitMs: 5_000,
  housekeepingIntervalMs: 1_000,
});

/** The defaults overridden by `overrides`, checked against Kafka's bounds. */
export function shareConfig(overrides: Partial<ShareConfig> = {}): ShareConfig {
  const config = { ...DEFAULT_SHARE_CONFIG, ...overrides };
  const positive: (keyof Omit<ShareConfig, 'autoOffsetReset' | 'isolationLevel'>)[] = [
    'recordLockDurationMs',
    'maxRecordLocks',
    'snapshotUpdateRecords',
    'heartbeatIntervalMs',
    'sessionTimeoutMs',
    'maxShareSessions',
    'defaultMaxRecords',
    'housekeepingIntervalMs',
  ];
  for (const name of positive) {
    if (!Number.isInteger(config[name]) || config[name] <= 0) throw new RangeError(`share config ${name} must be a positive integer, got ${config[name]}`);
  }
  // Kafka bounds the limit to 2–10 and the lock to 15–60 s; the broker's config check owns such bounds
  // (tests use short locks), here only what the state machine needs to work.
  if (!Number.isInteger(config.deliveryCountLimit) || config.deliveryCountLimit < 1) {
    throw new RangeError(`share config deliveryCountLimit must be a positive integer, got ${config.deliveryCountLimit}`);
  }
  if (config.autoOffsetReset !== 'earliest' && config.autoOffsetReset !== 'latest') {
    throw new RangeError(`share config autoOffsetReset must be 'earliest' or 'latest', got ${String(config.autoOffsetReset)}`);
  }
  if (config.isolationLevel !== 'read_committed' && config.isolationLevel !== 'read_uncommitted') {
    throw new RangeError(`share config isolationLevel must be 'read_committed' or 'read_uncommitted', got ${String(config.isolationLevel)}`);
  }
  if (!Number.isInteger(config.maxFetchWaitMs) || config.maxFetchWaitMs < 0) {
    throw new RangeError(`share config maxFetchWaitMs must be a non-negative integer, got ${config.maxFetchWaitMs}`);
  }
  return config;
}

/** What a group's configs (KIP-932 group configs) may set for its share partitions. */
export type GroupShareSettings = Pick<ShareConfig, 'autoOffsetReset' | 'isolationLevel' | 'recordLockDurationMs' | 'deliveryCountLimit'>;
