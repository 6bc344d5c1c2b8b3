/**
 * Transactional-id expiration (transactional.id.expiration.ms): the ids with
 * no transaction open or completing whose state was last written that long
 * ago are forgotten, after a tombstone for each is written to
 * `__transaction_state`. Kafka's TransactionStateManager.removeExpiredTransactionalIds:
 * per partition, the expired ids are marked pending DEAD (its prepareDead: no
 * bump, the state is kept), one batch of tombstones is appended, and once it
 * is written each id that was not changed meanwhile is removed from memory
 * (its removeFromCacheCallback). While the tombstone is written, requests for
 * the id are answered as for any pending state write.
 */
import type { Cluster } from '../cluster.js';
import type { TransactionLog } from './transaction-log.js';
import { TxnState, isExpirationAllowed, type TransactionMetadata, type TxnStateCode } from './transaction-metadata.js';

export interface ExpirationContext {
  /** The coordinator's transactional ids: expired ones are deleted from it. */
  txns: Map<string, TransactionMetadata>;
  cluster: Cluster;
  txnLog: TransactionLog;
  transactionalIdExpirationMs: number;
  log: (line: string) => void;
  /** Awaits a `__transaction_state` write for `metas` (the coordinator's record of writes in flight, which add requests wait for). */
  writing: (metas: TransactionMetadata[], write: Promise<void>) => Promise<void>;
}

/** What an expired id looked like when its tombstone was prepared: it is removed only if still so. */
interface ExpiringId {
  meta: TransactionMetadata;
  producerId: bigint;
  producerEpoch: number;
  state: TxnStateCode;
  lastUpdateTimestamp: number;
}

/** Forgets the transactional ids expired at `now`; resolves to them. */
export async function removeExpiredTransactionalIds(ctx: ExpirationContext, now: number): Promise<string[]> {
  const byPartition = groupByPartition(ctx.cluster, collectExpired(ctx, now));
  const removed = await Promise.all([...byPartition].map(([partition, metas]) => expirePartition(ctx, partition, metas, now)));
  return removed.flat();
}

/**
 * The ids with no state write in flight whose state allows expiration and
 * whose last update is at least transactionalIdExpirationMs before `now`:
 * Kafka's shouldExpire compares `txnLastUpdateTimestamp <= now - transactionalIdExpirationMs`,
 * so an id exactly that old expires.
 */
function collectExpired(ctx: ExpirationContext, now: number): TransactionMetadata[] {
  const cutoff = now - ctx.transactionalIdExpirationMs;
  return [...ctx.txns.values()].filter((meta) => !meta.pending && isExpirationAllowed(meta.state) && meta.lastUpdateTimestamp <= cutoff);
}

function groupByPartition(cluster: Cluster, metas: TransactionMetadata[]): Map<number, TransactionMetadata[]> {
  const groups = new Map<number, TransactionMetadata[]>();
  for (const meta of metas) {
    const partition = cluster.transactionPartitionFor(meta.transactionalId);
    const group = groups.get(partition);
    if (group === undefined) groups.set(partition, [meta]);
    else group.push(meta);
  }
  return groups;
}

/** Writes the tombstones of one partition's expired ids, then removes those still as they were; resolves to the removed ids. */
async function expirePartition(ctx: ExpirationContext, partition: number, metas: TransactionMetadata[], now: number): Promise<string[]> {
  const expiring: ExpiringId[] = metas.map((meta) => ({
    meta,
    producerId: meta.producerId,
    producerEpoch: meta.producerEpoch,
    state: meta.state,
    lastUpdateTimestamp: meta.lastUpdateTimestamp,
  }));
  for (const meta of metas) meta.prepareDead(now);
  const ids = metas.map((meta) => meta.transactionalId);
  try {
    await ctx.writing(metas, ctx.txnLog.writeTombstones(partition, ids, now));
  } catch (error) {
    // As Kafka when the append fails: the ids stay, no longer pending, and the next pass tries again.
    for (const meta of metas) meta.cancelTransition();
    ctx.log(`writing tombstones for expired transactional ids ${ids.join(', ')} failed: ${(error as Error).message}`);
    return [];
  }
  const removed = expiring.filter((entry) => removeIfUnchanged(ctx, entry)).map((entry) => entry.meta.transactionalId);
  // DEAD is never applied (Kafka's completeTransitionTo refuses it): an id kept in memory is free again.
  for (const meta of metas) meta.cancelTransition();
  return removed;
}

/**
 * Kafka removes an expired id from its cache only if it is still pending DEAD
 * with the producer epoch it had when the tombstone was prepared; kipgen's
 * analogue: still the same metadata, pending DEAD, with the identity, state and
 * last update it had. A tombstone for an id changed meanwhile is then
 * superseded as soon as that id's next state is written; until then a restart
 * would forget it.
 */
function removeIfUnchanged(ctx: ExpirationContext, entry: ExpiringId): boolean {
  const meta = entry.meta;
  const unchanged =
    ctx.txns.get(meta.transactionalId) === meta &&
    meta.pendingState === TxnState.DEAD &&
    meta.producerId === entry.producerId &&
    meta.producerEpoch === entry.producerEpoch &&
    meta.state === entry.state &&
    meta.lastUpdateTimestamp === entry.lastUpdateTimestamp;
  if (!unchanged) {
    ctx.log(`expired transactional id ${meta.transactionalId} changed while its tombstone was written: kept`);
    return false;
  }
  ctx.txns.delete(meta.transactionalId);
  return true;
}
