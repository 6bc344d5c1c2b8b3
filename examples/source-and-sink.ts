/**
 * KIP-1289 §2.3 — end-to-end exactly once, Flink style: a share-group source
 * and a Kafka sink bound to the same transaction, one transaction per
 * checkpoint.
 *
 *   each record                → sink.send() in the checkpoint's transaction; its ack buffered
 *   prepareCommit()            → flush the sink, sendShareAcksToTransaction(buffered acks):
 *                                the transaction holds the output and the acks, still open
 *   snapshotState()            → save the transaction's id/epoch and the acks in the checkpoint
 *   notifyCheckpointComplete() → commitTransaction(): output visible and acks applied, together
 *   on failure                 → abortTransaction(): output and acks both rolled back,
 *                                the records delivered again at once
 *
 * Checkpoint 1 commits. Checkpoint 2 never completes: after its
 * snapshotState another task fails, and the job restarts from checkpoint 1
 * while checkpoint 2's transaction is still prepared. The restarted task
 * completes checkpoint 1's saved transaction with
 * `KafkaProducer.completeTransaction(…, 'commit')`: that transaction already
 * committed ('unknown' to the coordinator, which keeps the last state only),
 * and the one open is checkpoint 2's — a different one, since
 * under Transactions V2 every transaction has its own epoch — so it is
 * aborted: its output is never visible and its page views come back at once,
 * into checkpoint 3. Between prepareCommit and notifyCheckpointComplete a
 * read_committed reader of the sink topic sees none of the checkpoint's output.
 *
 *   npx kipgen example source-and-sink [--bootstrap host:port]
 */
import {
  KafkaProducer,
  KafkaShareConsumer,
  ProducerFencedError,
  ShareAcknowledgements,
  type PreparedTransaction,
  type RecordMetadata,
  type SavedTransactionOutcome,
  type ShareConsumerRecord,
} from '../client/index.js';
import {
  describeAcks,
  describeEnvironment,
  exactlyOnce,
  finish,
  isThisRun,
  pollUntil,
  position,
  produceInput,
  readTopic,
  runExample,
  completeCheckpoint,
  latestCheckpoint,
  restoreTransaction,
  savePendingCheckpoint,
  storeTransaction,
  type StoredTransaction,
  text,
  type ExampleEnvironment,
  type ExampleOptions,
  type ExampleSummary,
} from './support.js';

export const NAME = 'source-and-sink';
const VIEWS = 'page-views';
const ENRICHED = 'page-views-enriched';
const VIEW_COUNT = 15;
const PAGES = ['/', '/pricing', '/docs/kip-1289', '/blog/exactly-once', '/docs/share-groups'];

interface PageView {
  view: number;
  user: string;
  path: string;
}

interface EnrichedView extends PageView {
  section: string;
}

/** The job's one operator. */
function enrich(view: PageView): EnrichedView {
  return { ...view, section: view.path.split('/')[1] || 'home' };
}

/**
 * The source and the sink of one task, driven by the checkpoint lifecycle:
 * Flink's SourceReader + KafkaSink writer/committer, in miniature. The
 * transaction begins when a checkpoint period begins.
 */
class SourceAndSinkTask {
  readonly consumer: KafkaShareConsumer;
  readonly sink: KafkaProducer;
  private buffered = new ShareAcknowledgements();
  private sends: Array<Promise<RecordMetadata>> = [];

  constructor(
    private readonly env: ExampleEnvironment,
    groupId: string,
    transactionalId: string,
  ) {
    this.consumer = new KafkaShareConsumer({
      bootstrapServers: env.bootstrap,
      groupId,
      acknowledgementMode: 'transactional',
      maxPollRecords: 5,
      logger: env.logger,
    });
    this.sink = new KafkaProducer({
      bootstrapServers: env.bootstrap,
      transactionalId,
      // prepareTransaction() needs two-phase commit (KIP-939), and so does the broker.
      transactionTwoPhaseCommitEnable: true,
      lingerMs: 5,
      metricsRegistry: null,
      logger: env.logger,
    });
  }

  async open(): Promise<void> {
    this.consumer.subscribe([VIEWS]);
    await this.sink.initTransactions();
    this.sink.beginTransaction(); // the first checkpoint period
  }

  /** Processing between checkpoints: source → enrich → sink (in the open transaction); acks buffered. */
  async process(): Promise<ShareConsumerRecord[]> {
    const records = await pollUntil(this.consumer, (r) => r.length > 0, 10_000, 'page views');
    for (const record of records) {
      if (isThisRun(this.env, record)) {
        const output = enrich(JSON.parse(text(record.value)) as PageView);
        const sent = this.sink.send({
          topic: ENRICHED,
          key: record.key,
          value: JSON.stringify(output),
          headers: { run: this.env.runId },
        });
        sent.catch(() => {}); // awaited in prepareCommit()
        this.sends.push(sent);
      }
      this.buffered.add(record, 'accept');
    }
    return records;
  }

  /** prepareCommit(): the sink's records are flushed, the acks join its transaction; the transaction stays open. */
  async prepareCommit(): Promise<{ prepared: PreparedTransaction; acks: ShareAcknowledgements }> {
    await Promise.all(this.sends.splice(0)); // every sink record written (a failed one fails the checkpoint)
    const acks = this.buffered;
    this.buffered = new ShareAcknowledgements();
    await this.sink.sendShareAcksToTransaction(acks, this.consumer.groupMetadata());
    const prepared = await this.sink.prepareTransaction(); // flush + wait for everything: pre-committed
    return { prepared, acks };
  }

  /** snapshotState(): what a restarted job needs to commit (or abort) this transaction; complete once every task has snapshotted. */
  snapshotState(checkpointId: number, prepared: PreparedTransaction, acks: ShareAcknowledgements): string {
    return savePendingCheckpoint(this.env.stateDir, checkpointId, {
      transaction: storeTransaction(prepared),
      acks: describeAcks(acks.partitions()),
    });
  }

  /** notifyCheckpointComplete(): commit, and begin the next checkpoint period's transaction. */
  async notifyCheckpointComplete(): Promise<void> {
    await this.sink.commitTransaction();
    this.sink.beginTransaction();
  }

  /** The task fails: its source's connection drops (acquired records go back); the sink's prepared transaction stays open. */
  async fail(): Promise<void> {
    await this.consumer.close();
    await Promise.allSettled(this.sends.splice(0));
  }

  async close(): Promise<void> {
    await this.consumer.close();
    await this.sink.close(); // aborts the empty transaction of the period that never checkpointed
  }
}

export interface SourceAndSinkSummary extends ExampleSummary {
  inputs: number;
  /** Enriched page views a read_committed reader sees at the end. */
  outputsCommitted: number;
  checkpointsCompleted: number;
  checkpointsAborted: number;
  /** Enriched views a read_committed reader saw between prepareCommit and notifyCheckpointComplete (must be 0). */
  visibleBeforeCommit: number;
  /** Output of the aborted checkpoint in the log (skipped by read_committed). */
  abortedOutputsInLog: number;
  /** Page views of the aborted checkpoint delivered again. */
  redelivered: number;
  /** The checkpoint the restarted job restored, and what became of its transaction ('unknown': a later one was open). */
  restoredCheckpoint: number;
  recovery: SavedTransactionOutcome | null;
  lost: number;
  duplicated: number;
  leftOver: number;
}

export async function runSourceAndSink(options: ExampleOptions = {}): Promise<SourceAndSinkSummary> {
  return runExample(
    [
      { name: VIEWS, partitions: 3 },
      { name: ENRICHED, partitions: 3 },
    ],
    options,
    sourceAndSink,
  );
}

async function sourceAndSink(env: ExampleEnvironment): Promise<SourceAndSinkSummary> {
  const { print, bootstrap } = env;
  // What a read_committed consumer of the sink topic sees (waitMs: how long to wait for open transactions to end).
  const committedViews = async (waitMs = 3_000): Promise<EnrichedView[]> =>
    (await readTopic(bootstrap, ENRICHED, 'read_committed', waitMs)).filter((r) => isThisRun(env, r)).map((r) => JSON.parse(r.value) as EnrichedView);
  print(`source-and-sink (KIP-1289 §2.3): ${VIEWS} → [share source] → enrich → [Kafka sink] → ${ENRICHED}, one transaction per checkpoint`);
  print(`  ${describeEnvironment(env)}`);

  // 1. Input.
  await produceInput(env, VIEWS, VIEW_COUNT, (i) => {
    const view: PageView = { view: i, user: `user-${i % 4}`, path: PAGES[i % PAGES.length]! };
    return { key: view.user, value: view };
  });
  print(`1. produced ${VIEW_COUNT} page views to ${VIEWS}`);

  const groupId = await env.shareGroup('page-view-enricher');
  const transactionalId = env.unique('page-view-enricher-sink-0');
  let task = new SourceAndSinkTask(env, groupId, transactionalId);
  await task.open();
  let failedTask: SourceAndSinkTask | null = null;
  let restoredCheckpoint = -1;
  let recovery: SourceAndSinkSummary['recovery'] = null;
  let zombieProblem: string | null = null;
  print(`2. task opened: transactional share consumer + transactional sink producer, first transaction begun`);

  let visibleBeforeCommit = 0;
  let completed = 0;
  let aborted = 0;
  let abortedRecords: ShareConsumerRecord[] = [];
  let abortedOutputsInLog = 0;
  const redelivered = new Set<string>();
  const processed = new Set<number>();
  let leftOver = 0;

  // One poll per checkpoint period (maxPollRecords 5), then the checkpoint.
  print('3. checkpoints:');
  for (let checkpointId = 1; processed.size < VIEW_COUNT; checkpointId++) {
    if (checkpointId > 10) throw new Error(`only ${processed.size} of ${VIEW_COUNT} page views processed after 10 checkpoints`);
    const records = await task.process();
    for (const r of records) {
      if (abortedRecords.some((a) => a.partition === r.partition && a.offset === r.offset)) redelivered.add(position(r));
    }
    const mine = records.filter((r) => isThisRun(env, r));
    const others = records.length > mine.length ? ` + ${records.length - mine.length} of earlier runs (acknowledged only)` : '';
    print(`   checkpoint ${checkpointId}: processed ${describe(mine)}${others}`);

    const { prepared, acks } = await task.prepareCommit();
    const file = task.snapshotState(checkpointId, prepared, acks);
    const before = await committedViews(0); // the transaction is open: read what is committed now
    const pendingVisible = before.filter((v) => mine.some((r) => (JSON.parse(text(r.value)) as PageView).view === v.view)).length;
    visibleBeforeCommit += pendingVisible;
    print(
      `     prepareCommit: ${mine.length} enriched views flushed + acks (${describeAcks(acks.partitions())}) in transaction {producerId ${prepared.producerId}, epoch ${prepared.producerEpoch}}`,
    );
    print(`     snapshotState: saved to ${file.split('/').pop()}; a read_committed reader sees ${pendingVisible} of them yet`);

    if (checkpointId === 2) {
      // Another task fails before checkpoint 2 completes: the job restarts from the last complete checkpoint,
      // while this task's checkpoint-2 transaction is still prepared.
      await task.fail();
      failedTask = task;
      print(`     ✗ another task fails before checkpoint 2 completes: the job restarts; checkpoint 2's transaction is still prepared`);
      const restored = latestCheckpoint<{ transaction: StoredTransaction }>(env.stateDir)!;
      restoredCheckpoint = restored.checkpointId;
      recovery = await KafkaProducer.completeTransaction(
        { bootstrapServers: bootstrap, logger: env.logger },
        restoreTransaction(restored.state.transaction),
        'commit',
      );
      aborted++;
      abortedRecords = mine;
      const inLog = (await readTopic(bootstrap, ENRICHED, 'read_uncommitted')).filter((r) => isThisRun(env, r)).length;
      const committedNow = (await committedViews()).length;
      abortedOutputsInLog = inLog - committedNow;
      print(
        `     restart: restores checkpoint ${restored.checkpointId}; completeTransaction(its transaction, 'commit') → ${recovery}` +
          (recovery === 'unknown'
            ? ` — checkpoint 1's ended before; the open transaction was checkpoint 2's: aborted, ${abortedOutputsInLog} enriched views aborted in the log, acks discarded`
            : ''),
      );
      task = new SourceAndSinkTask(env, groupId, transactionalId);
      await task.open();
      continue;
    }
    completeCheckpoint(env.stateDir, checkpointId);
    await task.notifyCheckpointComplete();
    completed++;
    for (const r of mine) processed.add((JSON.parse(text(r.value)) as PageView).view);
    const after = await committedViews();
    print(`     notifyCheckpointComplete → commitTransaction(): a read_committed reader now sees ${after.length} enriched views`);
  }
  leftOver = (await task.consumer.poll(300)).filter((r) => isThisRun(env, r)).length;
  await task.close();
  // The failed task's sink, if it ever comes back, is fenced: the restarted task's initTransactions() saw to that.
  if (failedTask !== null) {
    const error = await failedTask.sink.commitTransaction().then(
      () => null,
      (e: unknown) => e,
    );
    print(
      `   the failed task's sink comes back and calls commitTransaction(): ${error instanceof ProducerFencedError ? 'ProducerFencedError — fenced, as it must be' : String(error ?? 'it succeeded')}`,
    );
    if (!(error instanceof ProducerFencedError)) zombieProblem = 'the failed task was not fenced';
    await failedTask.sink.close(1_000);
  }

  // Verify with a read_committed reader: every page view enriched exactly once.
  const outputs = await committedViews();
  const { lost, duplicated } = exactlyOnce(
    outputs.map((v) => v.view),
    Array.from({ length: VIEW_COUNT }, (_, i) => i),
  );
  print(
    `4. read_committed reader of ${ENRICHED}: ${outputs.length} enriched views, lost ${lost}, duplicated ${duplicated}; ${redelivered.size} views of checkpoint 2 redelivered; ${leftOver} left to deliver`,
  );

  const problems: string[] = [];
  if (lost > 0) problems.push(`${lost} page view(s) lost`);
  if (duplicated > 0) problems.push(`${duplicated} page view(s) duplicated`);
  if (outputs.length !== VIEW_COUNT) problems.push(`${outputs.length} enriched views committed, expected ${VIEW_COUNT}`);
  if (visibleBeforeCommit > 0) problems.push(`${visibleBeforeCommit} enriched view(s) visible before notifyCheckpointComplete`);
  if (aborted !== 1) problems.push(`${aborted} checkpoints aborted, expected 1`);
  if (zombieProblem !== null) problems.push(zombieProblem);
  if (recovery !== 'unknown')
    problems.push(
      `completing checkpoint 1's transaction after the restart: ${recovery ?? 'not done'}; expected 'unknown' (checkpoint 2's open instead, aborted)`,
    );
  if (redelivered.size !== abortedRecords.length) problems.push(`${redelivered.size} of ${abortedRecords.length} aborted page views redelivered`);
  if (abortedOutputsInLog !== abortedRecords.length) problems.push(`${abortedOutputsInLog} aborted outputs in the log, expected ${abortedRecords.length}`);
  if (leftOver > 0) problems.push(`${leftOver} page view(s) delivered again after being committed`);

  return {
    ...finish(
      env,
      NAME,
      `${VIEW_COUNT} page views in, ${outputs.length} enriched views committed over ${completed} checkpoints; restart from checkpoint 1 while checkpoint 2 was prepared: ${abortedOutputsInLog} outputs rolled back, ${redelivered.size} views redelivered; lost ${lost}, duplicated ${duplicated}`,
      problems,
    ),
    inputs: VIEW_COUNT,
    outputsCommitted: outputs.length,
    checkpointsCompleted: completed,
    checkpointsAborted: aborted,
    visibleBeforeCommit,
    abortedOutputsInLog,
    redelivered: redelivered.size,
    restoredCheckpoint,
    recovery,
    lost,
    duplicated,
    leftOver,
  };
}

function describe(records: ShareConsumerRecord[]): string {
  return (
    records
      .map((r) => {
        const view = JSON.parse(text(r.value)) as PageView;
        return `#${view.view}${r.deliveryCount > 1 ? `↺` : ''}`;
      })
      .join(' ') + ` (${records.length} page views${records.some((r) => r.deliveryCount > 1) ? '; ↺ = redelivered' : ''})`
  );
}
