/**
 * A checkpointing job runner in the manner of Flink's two-phase-commit
 * source + sink (KIP-1289 use cases 2.2/2.3): a share-group source in
 * 'transactional' mode, a transactional Kafka sink, and checkpoints.
 *
 * Each checkpoint period opens one transaction; records polled in it are
 * transformed and sent to the sink, their acks buffered. At the checkpoint:
 *   prepareCommit()            sendShareAcksToTransaction(buffered acks) + producer.prepareTransaction()
 *                              (flushes the sink; the acks are pending in the same transaction). Without
 *                              --two-phase-commit (needed by prepareTransaction(), as in Kafka): flush()
 *                              and the producer's transactionSnapshot(), for the classic-protocol runs
 *   snapshotState()            writes {checkpointId, transaction metadata {transactionalId, producerId, epoch},
 *                              buffered acks} to the checkpoint file (write, fsync, rename)
 *   notifyCheckpointComplete() commitTransaction(), then marks the checkpoint committed in the file
 * Recovery at start: a checkpoint whose transaction was prepared but not marked
 * committed is finished with KafkaProducer.completeTransaction(snapshot, 'commit')
 * — KIP-939: it commits that transaction if it is still open, aborts a later
 * one, and says what became of the saved one (on a broker pinned to
 * transaction.version 1: EndTxn for the saved id and epoch); only then does the
 * new producer call initTransactions(), which would abort an open transaction.
 * With --two-phase-commit the sink producer enables KIP-939 two-phase commit
 * (the brokers need transactionTwoPhaseCommitEnable): its prepared
 * transactions are never aborted by the transaction timeout.
 *
 *   node --import tsx chaos/checkpoint-job.ts --bootstrap … --group G --input T --output T
 *     --transactional-id X --checkpoint-file F [--polls-per-checkpoint 2] [--max-poll-records 5]
 *     [--die-at after-share-acks|after-prepare|after-snapshot|after-commit] [--die-after-n-checkpoints K] [--two-phase-commit]
 *     [--transaction-timeout-ms 15000] [--idle-exit-ms 0] [--max-runtime-ms 60000] [--poll-gap-ms 0]
 *
 * `--poll-gap-ms G` waits G ms between the polls of one checkpoint (a checkpoint
 * interval longer than share.record.lock.duration.ms brings records back inside it).
 * An abortable failure before the snapshot (sendShareAcksToTransaction or
 * prepareTransaction) aborts the checkpoint's transaction and goes on (event aborted).
 *
 * stdout: JSON events — recovered (committed | aborted | unknown | failed | nothing), ready, polled, aborted,
 * checkpoint-prepared, snapshot, checkpoint-complete, dying, exit.
 */
import * as fs from 'node:fs';
import { KafkaProducer, KafkaShareConsumer, ShareAcknowledgements, type PreparedTransaction, type ShareConsumerRecord } from '../client/index.js';
import { writeFileAtomic } from '../coordinator/cluster.js';

type Point = 'after-share-acks' | 'after-prepare' | 'after-snapshot' | 'after-commit';

interface CheckpointFile {
  checkpointId: number;
  transaction: { transactionalId: string; producerId: string; producerEpoch: number } | null;
  /** The buffered acks of this checkpoint: `partition:offset` of each input record. */
  acks: string[];
  committed: boolean;
}

const argv = process.argv.slice(2);
const args = new Map<string, string>();
for (let i = 0; i < argv.length; i++) {
  const a = argv[i]!;
  const next = argv[i + 1];
  if (next === undefined || next.startsWith('--')) args.set(a.slice(2), 'true');
  else args.set(a.slice(2), argv[++i]!);
}
const need = (name: string): string => {
  const v = args.get(name);
  if (!v) {
    process.stderr.write(`checkpoint-job: --${name} is required\n`);
    process.exit(2);
  }
  return v;
};
const num = (name: string, fallback: number): number => (args.has(name) ? Number(args.get(name)) : fallback);

const bootstrap = need('bootstrap');
const group = need('group');
const input = need('input');
const output = need('output');
const transactionalId = need('transactional-id');
const checkpointFile = need('checkpoint-file');
const pollsPerCheckpoint = num('polls-per-checkpoint', 2);
const maxPollRecords = num('max-poll-records', 5);
const dieAt = (args.get('die-at') ?? null) as Point | null;
const dieAfter = num('die-after-n-checkpoints', 0);
const idleExitMs = num('idle-exit-ms', 0);
const maxRuntimeMs = num('max-runtime-ms', 60_000);
const clientId = args.get('client-id') ?? `ckpt-${transactionalId}`;
const twoPhaseCommit = args.get('two-phase-commit') === 'true';
const pollGapMs = num('poll-gap-ms', 0);
const started = Date.now();

const emit = (event: string, fields: Record<string, unknown> = {}): void => {
  process.stdout.write(JSON.stringify({ event, job: clientId, t: Date.now() - started, ...fields }, (_k, v) => (typeof v === 'bigint' ? String(v) : v)) + '\n');
};
const logger = {
  debug() {},
  info() {},
  warn: (m: string) => process.stderr.write(`[${clientId}] WARN ${m}\n`),
  error: (m: string) => process.stderr.write(`[${clientId}] ERROR ${m}\n`),
};
const common = { bootstrapServers: bootstrap, clientId, logger, retryBackoffMaxMs: 300, reconnectBackoffMaxMs: 300, requestTimeoutMs: 5_000 };

let stopping = false;
process.once('SIGTERM', () => (stopping = true));

function readCheckpoint(): CheckpointFile | null {
  try {
    return JSON.parse(fs.readFileSync(checkpointFile, 'utf8')) as CheckpointFile;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** snapshotState: durable before the checkpoint counts (write a temp file, fsync it, rename over). */
function writeCheckpoint(cp: CheckpointFile): void {
  writeFileAtomic(checkpointFile, JSON.stringify(cp));
}

function maybeDie(at: Point, checkpointId: number, sources: string[]): void {
  if (dieAt === at && checkpointId > dieAfter) {
    emit('dying', { at, checkpointId, sources });
    process.kill(process.pid, 'SIGKILL');
  }
}

async function recover(): Promise<number> {
  const cp = readCheckpoint();
  if (!cp) {
    emit('recovered', { outcome: 'nothing' });
    return 0;
  }
  if (cp.transaction && !cp.committed) {
    const prepared: PreparedTransaction = {
      transactionalId: cp.transaction.transactionalId,
      producerId: BigInt(cp.transaction.producerId),
      producerEpoch: cp.transaction.producerEpoch,
    };
    try {
      // classicProtocolFallback: the transaction.version 1 runs exercise the classic fallback on purpose (EndTxn
      // for the saved id and epoch); on a Transactions V2 broker it changes nothing.
      // What became of the checkpoint's transaction: 'committed' (now or before), 'aborted' (its acks discarded,
      // its records come back), 'unknown' (the coordinator moved past it; a later open transaction was aborted).
      const outcome = await KafkaProducer.completeTransaction({ ...common, maxBlockMs: 15_000, classicProtocolFallback: true }, prepared, 'commit');
      emit('recovered', { outcome, checkpointId: cp.checkpointId, sources: cp.acks });
    } catch (error) {
      emit('recovered', { outcome: 'failed', checkpointId: cp.checkpointId, sources: cp.acks, error: (error as Error).message });
    }
    writeCheckpoint({ ...cp, committed: true });
  } else {
    emit('recovered', { outcome: 'nothing', checkpointId: cp.checkpointId });
  }
  return cp.checkpointId;
}

async function main(): Promise<number> {
  let checkpointId = await recover();
  const consumer = new KafkaShareConsumer({ ...common, groupId: group, acknowledgementMode: 'transactional', maxPollRecords, fetchMaxWaitMs: 200 });
  const producer = new KafkaProducer({
    ...common,
    transactionalId,
    lingerMs: 1,
    transactionTimeoutMs: num('transaction-timeout-ms', 15_000),
    transactionTwoPhaseCommitEnable: twoPhaseCommit,
    maxBlockMs: 10_000,
    metricsRegistry: null,
  });
  try {
    consumer.subscribe([input]);
    await producer.initTransactions();
    emit('ready', { producer: producer.transactionSnapshot() });
    let lastRecords = Date.now();
    while (!stopping && Date.now() - started < maxRuntimeMs) {
      // One checkpoint period = one transaction.
      checkpointId++;
      producer.beginTransaction();
      const buffered = new ShareAcknowledgements();
      const sources: string[] = [];
      for (let polls = 0; polls < pollsPerCheckpoint && !stopping;) {
        // A checkpoint interval longer than the record lock (KIP §2.3): records of the first poll may come back.
        if (polls > 0 && pollGapMs > 0) await new Promise((r) => setTimeout(r, pollGapMs));
        const records: ShareConsumerRecord[] = await consumer.poll(200);
        if (records.length === 0) {
          if (idleExitMs > 0 && Date.now() - lastRecords > idleExitMs) stopping = true;
          if (sources.length > 0) break; // checkpoint what we have
          continue;
        }
        lastRecords = Date.now();
        polls++;
        emit('polled', { checkpointId, sources: records.map((r) => `${r.partition}:${r.offset}`), deliveryCounts: records.map((r) => r.deliveryCount) });
        for (const r of records) {
          const source = `${r.partition}:${r.offset}`;
          const sent = producer.send({
            topic: output,
            key: r.key,
            value: `${Buffer.from(r.value ?? []).toString()}:done`,
            headers: { source, job: clientId, checkpoint: String(checkpointId) },
          });
          sent.catch(() => {});
          buffered.add(r, 'accept');
          sources.push(source);
        }
      }
      if (sources.length === 0) {
        await producer.abortTransaction();
        checkpointId--;
        continue;
      }
      // prepareCommit. An abortable failure (the records' membership was lost, a lock ran out, a coordinator
      // moved) aborts this checkpoint's transaction, as Flink does on a failed pre-commit: its records come back.
      let prepared: Awaited<ReturnType<KafkaProducer['prepareTransaction']>>;
      try {
        await producer.sendShareAcksToTransaction(buffered, consumer.groupMetadata());
        maybeDie('after-share-acks', checkpointId, sources);
        if (twoPhaseCommit) prepared = await producer.prepareTransaction();
        else {
          await producer.flush();
          prepared = producer.transactionSnapshot();
        }
      } catch (error) {
        if (producer.transactionState !== 'ABORTABLE_ERROR' && producer.transactionState !== 'IN_TRANSACTION') throw error;
        await producer.abortTransaction();
        emit('aborted', { checkpointId, sources, error: `${(error as Error).name}: ${(error as Error).message}` });
        checkpointId--;
        continue;
      }
      emit('checkpoint-prepared', { checkpointId, producer: prepared, state: String(prepared) });
      maybeDie('after-prepare', checkpointId, sources);
      // snapshotState
      writeCheckpoint({ checkpointId, transaction: { ...prepared, producerId: String(prepared.producerId) }, acks: sources, committed: false });
      emit('snapshot', { checkpointId, sources });
      maybeDie('after-snapshot', checkpointId, sources);
      // notifyCheckpointComplete
      await producer.commitTransaction();
      maybeDie('after-commit', checkpointId, sources);
      writeCheckpoint({ checkpointId, transaction: { ...prepared, producerId: String(prepared.producerId) }, acks: sources, committed: true });
      emit('checkpoint-complete', { checkpointId, sources });
    }
    return 0;
  } finally {
    await Promise.race([Promise.all([consumer.close(2_000).catch(() => {}), producer.close(2_000).catch(() => {})]), new Promise((r) => setTimeout(r, 4_000))]);
  }
}

main().then(
  (code) => {
    emit('exit', { code });
    process.exit(code);
  },
  (error: Error) => {
    emit('fatal', { error: error.stack ?? error.message });
    process.exit(1);
  },
);
