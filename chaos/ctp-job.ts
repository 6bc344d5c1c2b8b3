/**
 * The consume-transform-produce job of the chaos tests (KIP-1289 §2.1), one OS
 * process: reads a share group in 'transactional' acknowledgement mode and,
 * per poll, writes one output record per input record (value `<input>:done`,
 * header `source` = `<partition>:<offset>`) in a transaction that also carries
 * the share acks (KafkaProducer.sendShareAcksToTransaction).
 *
 *   node --import tsx chaos/ctp-job.ts --bootstrap H:P[,…] --group G --input T --output T --transactional-id X
 *     [--client-id ID] [--max-poll-records 10] [--poll-ms 200]
 *     [--die-at before-begin|after-send|after-share-acks|after-commit] [--die-after-n-transactions K]
 *     [--hang-at <same points>] [--hang-after-n-transactions K]      SIGSTOP itself once, in transaction K+1 (a frozen process; SIGCONT resumes it)
 *     [--abort-txn K] [--abort-point before-acks|after-acks]          explicit abort of transaction K (1-based)
 *     [--release-txns K]                                               transactions 1..K give their records back: no output, acks RELEASE
 *     [--transaction-timeout-ms 3000] [--delivery-timeout-ms 120000] [--max-block-ms 10000]
 *     [--max-runtime-ms 120000] [--idle-exit-ms 0] [--txn-pause-ms 0]
 *
 * `--die-at P --die-after-n-transactions K`: K transactions complete normally,
 * then the job kills itself with SIGKILL (a real kill -9) at point P of
 * transaction K+1, after printing {"event":"dying",...}.
 *
 * `--release-txns K`: the first K transactions acknowledge their records with
 * RELEASE (in the transaction, as usual) and send no output: a job that hands
 * records back for redelivery. Such a commit is the event `released`.
 *
 * stdout: one JSON event per line — ready, polled, begin, committed (with the
 * source ids), released, aborted, failed, fenced, dying, hanging, exit. Exit codes: 0
 * done (SIGTERM, idle or max runtime), 3 fenced, 1 fatal error.
 */
import { KafkaProducer, KafkaShareConsumer, ProducerFencedError, ShareAcknowledgements, type ShareConsumerRecord } from '../client/index.js';
import { parseFlags } from './args.js';

type Point = 'before-begin' | 'after-send' | 'after-share-acks' | 'after-commit';
const POINTS: readonly Point[] = ['before-begin', 'after-send', 'after-share-acks', 'after-commit'];

const args = parseFlags(process.argv.slice(2));
function need(name: string): string {
  const v = args.get(name);
  if (!v) {
    process.stderr.write(`ctp-job: --${name} is required\n`);
    process.exit(2);
  }
  return v;
}
const num = (name: string, fallback: number): number => {
  const v = args.get(name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`--${name} must be a number`);
  return n;
};
function point(name: string): Point | null {
  const v = args.get(name);
  if (v === undefined) return null;
  if (!POINTS.includes(v as Point)) throw new Error(`--${name} must be one of ${POINTS.join(', ')}`);
  return v as Point;
}

const bootstrap = need('bootstrap');
const group = need('group');
const input = need('input');
const output = need('output');
const transactionalId = need('transactional-id');
const clientId = args.get('client-id') ?? `job-${transactionalId}`;
const maxPollRecords = num('max-poll-records', 10);
const pollMs = num('poll-ms', 200);
const dieAt = point('die-at');
const dieAfter = num('die-after-n-transactions', 0);
const hangAt = point('hang-at');
const hangAfter = num('hang-after-n-transactions', 0);
const abortTxn = num('abort-txn', 0);
const abortPoint = args.get('abort-point') ?? 'before-acks';
const releaseTxns = num('release-txns', 0);
const maxRuntimeMs = num('max-runtime-ms', 120_000);
const idleExitMs = num('idle-exit-ms', 0);
const txnPauseMs = num('txn-pause-ms', 0);

const started = Date.now();
const emit = (event: string, fields: Record<string, unknown> = {}): void => {
  process.stdout.write(JSON.stringify({ event, job: clientId, t: Date.now() - started, ...fields }, (_k, v) => (typeof v === 'bigint' ? String(v) : v)) + '\n');
};

let stopping = false;
process.once('SIGTERM', () => (stopping = true));
process.once('SIGINT', () => (stopping = true));

const logger = {
  debug() {},
  info() {},
  warn: (m: string) => process.stderr.write(`[${clientId}] WARN ${m}\n`),
  error: (m: string) => process.stderr.write(`[${clientId}] ERROR ${m}\n`),
};

const consumer = new KafkaShareConsumer({
  bootstrapServers: bootstrap,
  clientId,
  groupId: group,
  acknowledgementMode: 'transactional',
  maxPollRecords,
  fetchMaxWaitMs: Math.min(pollMs, 500),
  requestTimeoutMs: num('request-timeout-ms', 5_000),
  retryBackoffMaxMs: 300,
  reconnectBackoffMaxMs: 300,
  logger,
});
const producer = new KafkaProducer({
  bootstrapServers: bootstrap,
  clientId,
  transactionalId,
  lingerMs: 1,
  transactionTimeoutMs: num('transaction-timeout-ms', 3_000),
  deliveryTimeoutMs: num('delivery-timeout-ms', 120_000),
  maxBlockMs: num('max-block-ms', 10_000),
  requestTimeoutMs: num('request-timeout-ms', 5_000),
  retryBackoffMaxMs: 300,
  reconnectBackoffMaxMs: 300,
  metricsRegistry: null,
  logger,
});

const sourceOf = (r: ShareConsumerRecord): string => `${r.partition}:${r.offset}`;
const valueOf = (r: ShareConsumerRecord): string => (r.value ? Buffer.from(r.value).toString('utf8') : '');

/** Kills or freezes this process at `at` of transaction `txn`, when told to. */
function maybeFault(at: Point, txn: number, records: ShareConsumerRecord[]): void {
  if (dieAt === at && txn > dieAfter) {
    emit('dying', { at, txn, sources: records.map(sourceOf) });
    process.kill(process.pid, 'SIGKILL');
  }
  if (hangAt === at && txn === hangAfter + 1) {
    emit('hanging', { at, txn, sources: records.map(sourceOf) });
    process.kill(process.pid, 'SIGSTOP');
    emit('resumed', { at, txn });
  }
}

async function main(): Promise<number> {
  consumer.subscribe([input]);
  await producer.initTransactions();
  emit('ready', { producer: producer.transactionSnapshot() });
  let txn = 0;
  let lastRecords = Date.now();
  while (!stopping) {
    if (Date.now() - started > maxRuntimeMs) {
      emit('max-runtime');
      break;
    }
    if (idleExitMs > 0 && Date.now() - lastRecords > idleExitMs) {
      emit('idle');
      break;
    }
    const records = await consumer.poll(pollMs);
    if (records.length === 0) continue;
    lastRecords = Date.now();
    txn++;
    emit('polled', { txn, sources: records.map(sourceOf), deliveryCounts: records.map((r) => r.deliveryCount) });
    maybeFault('before-begin', txn, records);
    producer.beginTransaction();
    emit('begin', { txn });
    try {
      const sends: Promise<unknown>[] = [];
      const explicitAbort = abortTxn === txn;
      const release = txn <= releaseTxns;
      const toSend = release ? [] : explicitAbort && abortPoint === 'before-acks' ? records.slice(0, Math.max(1, Math.floor(records.length / 2))) : records;
      for (const r of toSend) {
        const sent = producer.send({
          topic: output,
          key: r.key,
          value: `${valueOf(r)}:done`,
          headers: { source: sourceOf(r), job: clientId, txn: String(txn) },
        });
        sent.catch(() => {}); // awaited below; a failure also fails the commit
        sends.push(sent);
      }
      if (explicitAbort && abortPoint === 'before-acks') {
        // KIP case 6: part of the output sent, then "record 5 fails validation".
        await Promise.all(sends);
        await producer.abortTransaction();
        emit('aborted', { txn, reason: 'validation', sources: records.map(sourceOf), acksSent: false });
        continue;
      }
      if (dieAt === 'after-send' || hangAt === 'after-send' || dieAt === 'after-share-acks' || hangAt === 'after-share-acks') {
        // A fault test wants the output in the log before the fault point: flush it first.
        await producer.flush();
        await Promise.all(sends);
      }
      maybeFault('after-send', txn, records);
      await producer.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, release ? 'release' : 'accept'), consumer.groupMetadata());
      maybeFault('after-share-acks', txn, records);
      if (explicitAbort) {
        await Promise.all(sends);
        await producer.abortTransaction();
        emit('aborted', { txn, reason: 'validation', sources: records.map(sourceOf), acksSent: true });
        continue;
      }
      if (txnPauseMs > 0) await new Promise((r) => setTimeout(r, txnPauseMs));
      await producer.commitTransaction();
      await Promise.all(sends);
      maybeFault('after-commit', txn, records);
      emit(release ? 'released' : 'committed', { txn, sources: records.map(sourceOf) });
    } catch (error) {
      if (error instanceof ProducerFencedError || producer.transactionState === 'FATAL_ERROR') {
        emit(error instanceof ProducerFencedError ? 'fenced' : 'fatal', { txn, error: (error as Error).message });
        return error instanceof ProducerFencedError ? 3 : 1;
      }
      emit('failed', { txn, error: `${(error as Error).name}: ${(error as Error).message}`, state: producer.transactionState });
      const state = producer.transactionState;
      if (state === 'IN_TRANSACTION' || state === 'ABORTABLE_ERROR') {
        try {
          await producer.abortTransaction();
          emit('aborted', { txn, reason: 'error', sources: records.map(sourceOf) });
        } catch (abortError) {
          emit('fatal', { txn, error: `abort failed: ${(abortError as Error).message}` });
          return 1;
        }
      } else if (state === 'COMMITTING_TRANSACTION') {
        // A commit that timed out: retrying it is the only correct move (it may have been prepared).
        for (let i = 0; i < 5 && producer.transactionState === 'COMMITTING_TRANSACTION'; i++) {
          try {
            await producer.commitTransaction();
            emit('committed', { txn, sources: records.map(sourceOf), retried: i + 1 });
          } catch (retryError) {
            emit('failed', { txn, error: `commit retry: ${(retryError as Error).message}`, state: producer.transactionState });
            if (retryError instanceof ProducerFencedError) return 3;
          }
        }
        if (producer.transactionState !== 'READY') return 1;
      } else if (state !== 'READY') {
        return 1;
      }
    }
  }
  return 0;
}

main()
  .then(async (code) => {
    emit('exit', { code });
    await Promise.race([Promise.all([consumer.close(2_000).catch(() => {}), producer.close(2_000).catch(() => {})]), new Promise((r) => setTimeout(r, 4_000))]);
    process.exit(code);
  })
  .catch((error: Error) => {
    emit('fatal', { error: error.stack ?? error.message });
    process.exit(1);
  });
