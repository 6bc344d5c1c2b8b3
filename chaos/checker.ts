/**
 * The independent exactly-once checker. It uses NONE of the job's code and
 * none of the client library: only the generated codecs and the runtime's
 * connection and record-batch code (via ./wire.ts).
 *
 * It reads
 *  - the input topic (every record: partition, offset, value),
 *  - the output topic: its committed records (what a read_committed consumer sees — a committed record
 *    behind another producer's open transaction counts too: it is decided, only not yet readable),
 *  - every `__share_group_state` partition in full (read_uncommitted, control
 *    markers included) and replays the share group's ShareSnapshot /
 *    ShareUpdate records itself: a transactional update counts only once its
 *    producer's COMMIT marker is in the log; an ABORT drops it; no marker yet
 *    means the acknowledgement is still pending (TX_PENDING),
 * and reports, per input record:
 *  - lost: no visible output and not ARCHIVED;
 *  - duplicated: more than one visible output;
 *  - output-without-ack: visible output, but the committed share state is not ACKNOWLEDGED;
 *  - ack-without-output: committed ACKNOWLEDGED, but no visible output;
 *  - archived: ARCHIVED (delivery-count limit or a committed REJECT);
 *  - pending: a transactional ack with no marker yet (only legal while a transaction is open), or a
 *    record whose transaction is committing right now — its output's COMMIT marker is in the log and its
 *    ack's not yet, or the other way round (same producer on both sides): not a violation, not done.
 *
 * The output and the share state are read at one consistent cut (each read again around the other until
 * neither changed), so that a commit happening while the checker reads cannot look like a violation.
 *
 * CLI: node --import tsx chaos/checker.ts --bootstrap H:P[,H:P] --group G --input T --output T [--json]
 * prints one line: `checker: inputs=… outputs=… lost=0 duplicated=0 output-without-ack=0 ack-without-output=0 archived=0 pending=0`
 * and exits 1 when anything but `archived` is non-zero.
 */
import { pathToFileURL } from 'node:url';
import { ShareSnapshotKey, ShareSnapshotValue, ShareUpdateKey, ShareUpdateValue } from '../generated/index.js';
import { readControlRecord, type RecordBatch } from '../runtime/record-batch.js';
import { utf8, WireClient } from './wire.js';
import { parseFlags } from './args.js';

export const SHARE_STATE_TOPIC = '__share_group_state';

/** Persisted delivery states (Kafka's RecordState ids). */
const AVAILABLE = 0;
const ACKNOWLEDGED = 2;
const ARCHIVED = 4;

export type FinalState = 'available' | 'acknowledged' | 'archived' | 'pending' | 'done-unknown';

export interface RecordVerdict {
  /** `partition:offset` of the input record. */
  id: string;
  value: string;
  outputs: number;
  state: FinalState;
  deliveryCount: number;
}

export interface CheckReport {
  inputs: number;
  /** Visible (committed) output records. */
  outputs: number;
  lost: number;
  duplicated: number;
  outputWithoutAck: number;
  ackWithoutOutput: number;
  archived: number;
  pending: number;
  /** Output records whose value or source header matches no input record. */
  foreign: number;
  /** True when no transaction was open on the output topic (LSO = HW everywhere). */
  stable: boolean;
  /** The ids behind each non-zero count (first 20 of each). */
  examples: Record<string, string[]>;
  verdicts: Map<string, RecordVerdict>;
}

interface OutputRecordRef {
  value: string;
  source: string | null;
  producerId: bigint;
}

interface OutputRead {
  /** Committed output: what a read_committed consumer sees, or will see once the last stable offset passes it. */
  visible: OutputRecordRef[];
  /** Records of transactions still open (no marker yet). */
  open: OutputRecordRef[];
  /** No transaction open on any partition (LSO = HW). */
  stable: boolean;
  /** High watermark / last stable offset of every partition, to tell whether two reads saw the same log. */
  ends: string;
}

function sourceOf(r: { value: Uint8Array | null; headers: { key: string; value: Uint8Array | null }[] }): { value: string; source: string | null } {
  const header = r.headers.find((h) => h.key === 'source');
  return { value: utf8(r.value), source: header ? utf8(header.value) : null };
}

export interface CheckOptions {
  bootstrap: string | string[];
  group: string;
  input: string;
  output: string;
  /** Wait up to this long for open transactions on the output to end (LSO = HW). Default 0. */
  settleMs?: number;
}

export function summaryLine(r: CheckReport): string {
  return (
    `checker: inputs=${r.inputs} outputs=${r.outputs} lost=${r.lost} duplicated=${r.duplicated} ` +
    `output-without-ack=${r.outputWithoutAck} ack-without-output=${r.ackWithoutOutput} archived=${r.archived} pending=${r.pending}` +
    (r.foreign > 0 ? ` foreign=${r.foreign}` : '') +
    (r.stable ? '' : ' (output had an open transaction)')
  );
}

/** True when exactly-once held: nothing lost, duplicated, half-committed or pending. */
export function isClean(r: CheckReport): boolean {
  return r.lost === 0 && r.duplicated === 0 && r.outputWithoutAck === 0 && r.ackWithoutOutput === 0 && r.pending === 0 && r.foreign === 0;
}

export interface PartitionShareState {
  startOffset: bigint;
  /** State of offsets ≥ startOffset named by the current snapshot/updates. */
  current: Map<bigint, { state: number; count: number }>;
  /** Last terminal state ever written for an offset (survives snapshots that move the start past it). */
  lastTerminal: Map<bigint, number>;
  /** Offsets with a transactional ack and no marker yet, and the producer of each. */
  pendingBy: Map<bigint, bigint>;
  /** The producer whose committed transactional update last acknowledged the offset. */
  ackedBy: Map<bigint, bigint>;
}

type ShareRecord =
  | {
      kind: 'snapshot' | 'update';
      topicId: string;
      partition: number;
      startOffset: bigint;
      batches: { firstOffset: bigint; lastOffset: bigint; deliveryState: number; deliveryCount: number }[];
    }
  | { kind: 'tombstone'; topicId: string; partition: number };

function readInt16(bytes: Uint8Array, at: number): number {
  return (((bytes[at]! << 8) | bytes[at + 1]!) << 16) >> 16;
}

/** Decodes a `__share_group_state` record of `group` (null for other groups and record types). */
function decodeShareRecord(key: Uint8Array | null, value: Uint8Array | null, group: string): ShareRecord | null {
  if (key === null || key.length < 2) return null;
  const type = readInt16(key, 0);
  if (type !== 0 && type !== 1) return null;
  const k = type === 0 ? ShareSnapshotKey.decode(key.subarray(2), 0) : ShareUpdateKey.decode(key.subarray(2), 0);
  if (k.groupId !== group) return null;
  if (value === null) return { kind: 'tombstone', topicId: k.topicId, partition: k.partition };
  const version = readInt16(value, 0);
  const v = type === 0 ? ShareSnapshotValue.decode(value.subarray(2), version) : ShareUpdateValue.decode(value.subarray(2), version);
  return {
    kind: type === 0 ? 'snapshot' : 'update',
    topicId: k.topicId,
    partition: k.partition,
    startOffset: v.startOffset,
    batches: v.stateBatches.map((b) => ({
      firstOffset: b.firstOffset,
      lastOffset: b.lastOffset,
      deliveryState: b.deliveryState,
      deliveryCount: b.deliveryCount,
    })),
  };
}

/** Replays the share group's records of the `__share_group_state` partitions for one topic. */
export function replayShareState(logs: RecordBatch[][], group: string, topicId: string): Map<number, PartitionShareState> {
  const states = new Map<number, PartitionShareState>();
  const stateOf = (partition: number): PartitionShareState => {
    let s = states.get(partition);
    if (!s) {
      s = { startOffset: 0n, current: new Map(), lastTerminal: new Map(), pendingBy: new Map(), ackedBy: new Map() };
      states.set(partition, s);
    }
    return s;
  };
  const apply = (r: ShareRecord, committedBy: bigint | null = null): void => {
    if (r.topicId !== topicId) return;
    const s = stateOf(r.partition);
    if (r.kind === 'tombstone') {
      s.current.clear();
      s.startOffset = 0n;
      return;
    }
    if (r.kind === 'snapshot') {
      s.current.clear();
      s.startOffset = r.startOffset < 0n ? 0n : r.startOffset;
    } else if (r.startOffset >= 0n && r.startOffset > s.startOffset) {
      s.startOffset = r.startOffset;
    }
    for (const b of r.batches) {
      for (let o = b.firstOffset; o <= b.lastOffset; o++) {
        s.current.set(o, { state: b.deliveryState, count: b.deliveryCount });
        if (b.deliveryState === ACKNOWLEDGED || b.deliveryState === ARCHIVED) s.lastTerminal.set(o, b.deliveryState);
        if (committedBy !== null && b.deliveryState === ACKNOWLEDGED) s.ackedBy.set(o, committedBy);
        else s.ackedBy.delete(o);
      }
    }
    for (const o of [...s.current.keys()]) if (o < s.startOffset) s.current.delete(o);
  };
  for (const batches of logs) {
    /** producer id → its transactional share records not yet resolved by a marker. */
    const open = new Map<bigint, ShareRecord[]>();
    for (const batch of batches) {
      if (batch.isControl) {
        const marker = readControlRecord(batch.records[0]!);
        const pending = open.get(batch.producerId);
        open.delete(batch.producerId);
        if (marker.type === 'COMMIT') for (const r of pending ?? []) apply(r, batch.producerId);
        continue;
      }
      for (const record of batch.records) {
        const r = decodeShareRecord(record.key, record.value, group);
        if (!r) continue;
        if (batch.isTransactional) open.set(batch.producerId, [...(open.get(batch.producerId) ?? []), r]);
        else apply(r);
      }
    }
    for (const [producerId, records] of open) {
      for (const r of records) {
        if (r.kind === 'tombstone' || r.topicId !== topicId) continue;
        const s = stateOf(r.partition);
        for (const b of r.batches) {
          for (let o = b.firstOffset; o <= b.lastOffset; o++) {
            s.pendingBy.set(o, producerId);
          }
        }
      }
    }
  }
  return states;
}

/** How the replayed share state classifies one offset of the input (see the module comment). */
export function finalState(s: PartitionShareState | undefined, offset: bigint): { state: FinalState; count: number } {
  if (!s) return { state: 'available', count: 0 };
  if (s.pendingBy.has(offset)) return { state: 'pending', count: s.current.get(offset)?.count ?? 0 };
  if (offset < s.startOffset) {
    const t = s.lastTerminal.get(offset);
    return { state: t === ACKNOWLEDGED ? 'acknowledged' : t === ARCHIVED ? 'archived' : 'done-unknown', count: 0 };
  }
  const c = s.current.get(offset);
  if (!c || c.state === AVAILABLE) return { state: 'available', count: c?.count ?? 0 };
  return { state: c.state === ACKNOWLEDGED ? 'acknowledged' : c.state === ARCHIVED ? 'archived' : 'available', count: c.count };
}

export async function check(options: CheckOptions): Promise<CheckReport> {
  const client = new WireClient(WireClient.parseBootstrap(options.bootstrap));
  try {
    const topics = await client.metadata([options.input, options.output, SHARE_STATE_TOPIC]);
    const input = topics.get(options.input)!;
    const output = topics.get(options.output)!;
    const shareState = topics.get(SHARE_STATE_TOPIC)!;

    // Inputs: partition:offset → value.
    const inputs = new Map<string, string>();
    const byValue = new Map<string, string>();
    for (let p = 0; p < input.leaders.length; p++) {
      const { batches } = await client.readPartition(input, p, 'read_uncommitted');
      for (const b of batches) {
        if (b.isControl) continue;
        for (const r of b.records) {
          const id = `${p}:${r.offset}`;
          inputs.set(id, utf8(r.value));
          byValue.set(utf8(r.value), id);
        }
      }
    }

    // The state of share partition group:topic:p lives in the `__share_group_state` partition led by
    // the node that leads data partition p (DESIGN §6); the others cannot hold it (and may be down).
    const needed = new Set(input.leaders);
    const sharePartitions = [...shareState.leaders.keys()].filter((p) => needed.has(shareState.leaders[p]!));
    const readShareState = async (): Promise<{ logs: RecordBatch[][]; ends: string }> => {
      const logs: RecordBatch[][] = [];
      const ends: string[] = [];
      for (const p of sharePartitions) {
        const read = await client.readPartition(shareState, p, 'read_uncommitted');
        logs.push(read.batches);
        ends.push(String(read.highWatermark));
      }
      return { logs, ends: ends.join(',') };
    };
    const readOutput = async (): Promise<OutputRead> => {
      const out: OutputRead = { visible: [], open: [], stable: true, ends: '' };
      const ends: string[] = [];
      for (let p = 0; p < output.leaders.length; p++) {
        const read = await client.readPartition(output, p, 'read_uncommitted');
        ends.push(String(read.highWatermark));
        // A transactional batch is decided by its producer's next marker: COMMIT → visible to read_committed
        // consumers (at once, or as soon as an earlier open transaction of another producer ends and the last
        // stable offset moves past it), ABORT → never; no marker yet → open.
        const fate = new Map<bigint, 'COMMIT' | 'ABORT'>();
        const decided: Array<{ batch: RecordBatch; fate: 'COMMIT' | 'ABORT' | 'open' }> = [];
        for (const b of [...read.batches].reverse()) {
          if (b.isControl) {
            const type = readControlRecord(b.records[0]!).type;
            if (type === 'COMMIT' || type === 'ABORT') fate.set(b.producerId, type);
            continue;
          }
          decided.push({ batch: b, fate: b.isTransactional ? (fate.get(b.producerId) ?? 'open') : 'COMMIT' });
        }
        for (const { batch, fate: f } of decided.reverse()) {
          if (f === 'ABORT') continue;
          if (f === 'open') out.stable = false;
          for (const r of batch.records) (f === 'COMMIT' ? out.visible : out.open).push({ ...sourceOf(r), producerId: batch.producerId });
        }
      }
      out.ends = ends.join(',');
      return out;
    };

    // Outputs and share state at one consistent cut: each read twice around the other, unchanged (the moment between the
    // first output read and the second share-state read saw both as they are); wait (bounded) for open transactions to end.
    const deadline = Date.now() + (options.settleMs ?? 0);
    let cut: { share: { logs: RecordBatch[][]; ends: string }; output: OutputRead };
    for (;;) {
      let share = await readShareState();
      let outputRead = await readOutput();
      for (let attempt = 0; attempt < 5; attempt++) {
        const shareAgain = await readShareState();
        const outputAgain = await readOutput();
        if (shareAgain.ends === share.ends && outputAgain.ends === outputRead.ends) break;
        share = shareAgain;
        outputRead = outputAgain;
      }
      cut = { share, output: outputRead };
      if (outputRead.stable || Date.now() >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const outputs = cut.output.visible;
    const stable = cut.output.stable;
    const states = replayShareState(cut.share.logs, options.group, input.topicId);

    const outputCount = new Map<string, number>();
    let foreign = 0;
    const examples: Record<string, string[]> = {};
    const note = (what: string, id: string): void => {
      const list = (examples[what] ??= []);
      if (list.length < 20) list.push(id);
    };
    const idOf = (o: { value: string; source: string | null }): string | undefined => {
      const base = o.value.endsWith(':done') ? o.value.slice(0, -':done'.length) : null;
      const id = base !== null ? byValue.get(base) : undefined;
      return id === undefined || (o.source !== null && o.source !== id) ? undefined : id;
    };
    /** Producers whose visible output (committed) and open output (no marker yet) hold each input id. */
    const visibleBy = new Map<string, Set<bigint>>();
    const openBy = new Map<string, Set<bigint>>();
    for (const o of outputs) {
      const id = idOf(o);
      if (id === undefined) {
        foreign++;
        note('foreign', `${o.value} (source ${o.source})`);
        continue;
      }
      outputCount.set(id, (outputCount.get(id) ?? 0) + 1);
      (visibleBy.get(id) ?? visibleBy.set(id, new Set()).get(id)!).add(o.producerId);
    }
    for (const o of cut.output.open) {
      const id = idOf(o);
      if (id !== undefined) (openBy.get(id) ?? openBy.set(id, new Set()).get(id)!).add(o.producerId);
    }

    const report: CheckReport = {
      inputs: inputs.size,
      outputs: outputs.length,
      lost: 0,
      duplicated: 0,
      outputWithoutAck: 0,
      ackWithoutOutput: 0,
      archived: 0,
      pending: 0,
      foreign,
      stable,
      examples,
      verdicts: new Map(),
    };
    for (const [id, value] of inputs) {
      const [p, o] = id.split(':') as [string, string];
      const share = states.get(Number(p));
      const offset = BigInt(o);
      const { state, count } = finalState(share, offset);
      const n = outputCount.get(id) ?? 0;
      report.verdicts.set(id, { id, value, outputs: n, state, deliveryCount: count });
      if (n > 1) {
        report.duplicated++;
        note('duplicated', id);
      }
      if (state === 'archived') report.archived++;
      // A transaction whose commit is being completed: the COMMIT marker of its output is written and the one of its acks
      // not yet, or the other way round (markers reach the partitions one by one). Not a violation, not finished either:
      // counted as pending (which a final verdict does not allow).
      const pendingBy = share?.pendingBy.get(offset);
      const ackedBy = share?.ackedBy.get(offset);
      const inDoubt =
        (n === 1 && state === 'pending' && pendingBy !== undefined && (visibleBy.get(id)?.has(pendingBy) ?? false)) ||
        (n === 0 && state === 'acknowledged' && ackedBy !== undefined && (openBy.get(id)?.has(ackedBy) ?? false));
      if (inDoubt) {
        report.pending++;
        note('pending', `${id}(commit completing)`);
        continue;
      }
      if (state === 'pending') {
        report.pending++;
        note('pending', id);
      }
      if (n === 0 && state !== 'archived') {
        report.lost++;
        note('lost', `${id}(${state})`);
      }
      if (n > 0 && state !== 'acknowledged' && state !== 'done-unknown') {
        report.outputWithoutAck++;
        note('output-without-ack', `${id}(${state})`);
      }
      if (n === 0 && (state === 'acknowledged' || state === 'done-unknown')) {
        report.ackWithoutOutput++;
        note('ack-without-output', `${id}(${state})`);
      }
    }
    return report;
  } finally {
    await client.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = Object.fromEntries(parseFlags(process.argv.slice(2)));
  for (const required of ['bootstrap', 'group', 'input', 'output']) {
    if (!args[required]) {
      process.stderr.write(`usage: checker --bootstrap H:P[,H:P] --group G --input T --output T [--settle-ms N] [--json]\n(missing --${required})\n`);
      process.exit(2);
    }
  }
  check({ bootstrap: args.bootstrap!, group: args.group!, input: args.input!, output: args.output!, settleMs: Number(args['settle-ms'] ?? 5_000) }).then(
    (report) => {
      process.stdout.write(summaryLine(report) + '\n');
      if (args.json) process.stdout.write(JSON.stringify({ ...report, verdicts: undefined }) + '\n');
      for (const [what, ids] of Object.entries(report.examples)) process.stderr.write(`  ${what}: ${ids.join(' ')}\n`);
      process.exit(isClean(report) ? 0 : 1);
    },
    (error: Error) => {
      process.stderr.write(`checker failed: ${error.stack ?? error.message}\n`);
      process.exit(2);
    },
  );
}
