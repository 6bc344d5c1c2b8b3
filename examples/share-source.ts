/**
 * KIP-1289 §2.2 — a share group as the source of a stream-processing job,
 * with no Kafka producer in the pipeline (the output goes elsewhere: here,
 * running totals per sensor kept as operator state).
 *
 * The source buffers the acknowledgements of the records it has emitted and
 * settles them at checkpoints with a TransactionalShareAcknowledger:
 *
 * - the simple form (the KIP's snippet): the checkpoint is saved, then on
 *   "checkpoint complete" `commitAcknowledgements(bufferedAcks, …)`;
 * - the two-phase form, for a crash between the two: `prepareAcknowledgements`
 *   puts the acks in a transaction and returns its id and epoch, which are
 *   saved *in* the checkpoint; on "checkpoint complete" `commitPrepared()`, or,
 *   if the job died first, the restarted job commits it from the checkpoint
 *   with `TransactionalShareAcknowledger.completeTransaction(…, 'commit')`.
 *
 * Here checkpoint 2 completes and commits; checkpoint 3's acks are then
 * prepared, but checkpoint 3 never completes (another task fails) and the
 * job restarts from checkpoint 2 while checkpoint 3's transaction is still
 * prepared. Restoring checkpoint 2 and completing *its* transaction must not
 * commit checkpoint 3's acks: checkpoint 2's saved PreparedTxnState names
 * exactly one transaction (Transactions V2: an epoch per transaction), so
 * completeTransaction finds a different one open and aborts it (checkpoint
 * 2's own had ended before: 'unknown' to the coordinator), and the
 * readings acknowledged in it are delivered again at once — every reading
 * ends up counted exactly once. The old instance, if it comes back, is fenced.
 *
 *   npx kipgen example share-source [--bootstrap host:port]
 */
import {
  KafkaShareConsumer,
  ProducerFencedError,
  ShareAcknowledgements,
  TransactionalShareAcknowledger,
  type SavedTransactionOutcome,
  type ShareConsumerRecord,
} from '../client/index.js';
import {
  describeAcks,
  describeEnvironment,
  exactlyOnce,
  finish,
  isThisRun,
  completeCheckpoint,
  latestCheckpoint,
  pollUntil,
  position,
  savePendingCheckpoint,
  produceInput,
  restoreTransaction,
  runExample,
  saveCheckpoint,
  storeTransaction,
  text,
  type ExampleEnvironment,
  type ExampleOptions,
  type ExampleSummary,
  type StoredTransaction,
} from './support.js';

export const NAME = 'share-source';
const READINGS = 'sensor-readings';
const READING_COUNT = 12;
/** This reading is malformed: the source rejects it (archived, never delivered again). */
const MALFORMED = 5;
const SENSORS = ['boiler', 'chiller', 'pump'];

interface Reading {
  reading: number;
  sensor: string;
  celsius: number | string;
}

/** The operator state: per sensor, the readings counted and their sum. */
type Totals = Record<string, { readings: number[]; sumCelsius: number }>;

/** What a checkpoint holds. */
interface Checkpoint {
  totals: Totals;
  /** The transaction holding this checkpoint's acknowledgements (two-phase form). */
  transaction?: StoredTransaction;
  acks?: string;
}

/**
 * One attempt of the source task: a share consumer in transactional mode, a
 * TransactionalShareAcknowledger, the operator state, and the acks buffered
 * since the last checkpoint.
 */
class ShareSourceTask {
  readonly consumer: KafkaShareConsumer;
  readonly acknowledger: TransactionalShareAcknowledger;
  buffered = new ShareAcknowledgements();

  constructor(
    private readonly env: ExampleEnvironment,
    readonly groupId: string,
    readonly transactionalId: string,
    public totals: Totals,
  ) {
    this.consumer = new KafkaShareConsumer({
      bootstrapServers: env.bootstrap,
      groupId,
      acknowledgementMode: 'transactional',
      maxPollRecords: 3,
      logger: env.logger,
    });
    this.acknowledger = new TransactionalShareAcknowledger({
      bootstrapServers: env.bootstrap,
      transactionalId,
      // prepareAcknowledgements() needs two-phase commit (KIP-939), and so does the broker.
      transactionTwoPhaseCommitEnable: true,
      metricsRegistry: null,
      logger: env.logger,
    });
  }

  async start(): Promise<void> {
    this.consumer.subscribe([READINGS]);
    await this.acknowledger.initTransactions(); // fences any older instance with this transactional id
  }

  /** Polls once (waiting for records) and processes what came: counts valid readings, rejects malformed ones. */
  async pollAndProcess(): Promise<ShareConsumerRecord[]> {
    const records = await pollUntil(this.consumer, (r) => r.length > 0, 10_000, 'sensor readings');
    for (const record of records) {
      if (!isThisRun(this.env, record)) {
        this.buffered.add(record, 'accept'); // an older run's reading, on a shared broker: not ours to count
        continue;
      }
      const reading = JSON.parse(text(record.value)) as Reading;
      if (typeof reading.celsius !== 'number') {
        this.buffered.add(record, 'reject'); // poison: archive it, never deliver it again
        continue;
      }
      const total = (this.totals[reading.sensor] ??= { readings: [], sumCelsius: 0 });
      total.readings.push(reading.reading);
      total.sumCelsius += reading.celsius;
      this.buffered.add(record, 'accept');
    }
    return records;
  }

  /** The simple form (KIP §2.2): save the state; when the checkpoint is complete, commit the buffered acks. */
  async checkpoint(checkpointId: number): Promise<string> {
    saveCheckpoint(this.env.stateDir, checkpointId, { totals: this.totals } satisfies Checkpoint);
    const acks = this.takeBuffered();
    // on checkpoint complete:
    await this.acknowledger.commitAcknowledgements(acks, this.consumer.groupMetadata());
    return describeAcks(acks.partitions());
  }

  /** The two-phase form, step 1 (snapshotState): acks pending in a transaction, saved with the state; complete once every task has snapshotted. */
  async snapshotState(checkpointId: number): Promise<{ file: string; transaction: StoredTransaction; acks: string }> {
    const acks = this.takeBuffered();
    const prepared = await this.acknowledger.prepareAcknowledgements(acks, this.consumer.groupMetadata());
    const transaction = storeTransaction(prepared);
    const described = describeAcks(acks.partitions());
    const file = savePendingCheckpoint(this.env.stateDir, checkpointId, {
      totals: this.totals,
      transaction,
      acks: described,
    } satisfies Checkpoint);
    return { file, transaction, acks: described };
  }

  /** The two-phase form, step 2 (notifyCheckpointComplete). */
  async notifyCheckpointComplete(): Promise<void> {
    await this.acknowledger.commitPrepared();
  }

  private takeBuffered(): ShareAcknowledgements {
    const acks = this.buffered;
    this.buffered = new ShareAcknowledgements();
    return acks;
  }
}

export interface ShareSourceSummary extends ExampleSummary {
  inputs: number;
  /** Valid readings counted in the final state (each once). */
  counted: number;
  rejected: number;
  /** Readings the first attempt had read after its last checkpoint, delivered again to the restarted one. */
  redeliveredAfterRestart: number;
  /** The restarted job completed the transaction of the checkpoint it restored. */
  recoveredFromCheckpoint: boolean;
  /**
   * What became of checkpoint 2's transaction: 'unknown' — it ended before the restart and the coordinator had
   * moved on to checkpoint 3's (still prepared, which completeTransaction aborted).
   */
  recovery: SavedTransactionOutcome | null;
  /** The first attempt's acknowledger, calling commitPrepared() after the restart, got ProducerFencedError. */
  zombieFenced: boolean;
  lost: number;
  duplicated: number;
  /** Readings delivered again after the end. */
  leftOver: number;
}

export async function runShareSource(options: ExampleOptions = {}): Promise<ShareSourceSummary> {
  return runExample([{ name: READINGS, partitions: 2 }], options, shareSource);
}

async function shareSource(env: ExampleEnvironment): Promise<ShareSourceSummary> {
  const { print, bootstrap } = env;
  const groupId = await env.shareGroup('sensor-totals');
  const transactionalId = env.unique('sensor-totals-source-0');
  print(`share-source (KIP-1289 §2.2): ${READINGS} → [share source] → totals per sensor (operator state, checkpointed); no producer`);
  print(`  ${describeEnvironment(env)}; checkpoints in ${env.stateDir}`);

  // 1. Input.
  await produceInput(env, READINGS, READING_COUNT, (i) => {
    const reading: Reading = {
      reading: i,
      sensor: SENSORS[i % SENSORS.length]!,
      celsius: i === MALFORMED ? 'n/a' : 20 + ((i * 7) % 15),
    };
    return { key: reading.sensor, value: reading };
  });
  print(`1. produced ${READING_COUNT} sensor readings to ${READINGS} (reading ${MALFORMED} is malformed)`);

  // 2. Attempt 1 of the job.
  const first = new ShareSourceTask(env, groupId, transactionalId, {});
  await first.start();
  print(`2. attempt 1: share consumer in group ${groupId} (transactional mode), TransactionalShareAcknowledger ${transactionalId}`);
  let records = await first.pollAndProcess();
  print(`   polled ${describe(env, records)} → state updated, acks buffered`);
  const acks1 = await first.checkpoint(1);
  print(`   checkpoint 1: state saved; on checkpoint complete → commitAcknowledgements(${acks1}) ✓`);
  print(`     (a crash between saving and committing would count these readings twice: checkpoint 2 closes that gap)`);
  records = await first.pollAndProcess();
  print(`   polled ${describe(env, records)} → state updated, acks buffered`);
  const snapshot = await first.snapshotState(2);
  print(`   checkpoint 2: prepareAcknowledgements(${snapshot.acks}) → pending in transaction`);
  print(
    `     {producerId ${snapshot.transaction.producerId}, epoch ${snapshot.transaction.producerEpoch}}, saved with the state in ${snapshot.file.split('/').pop()}`,
  );
  completeCheckpoint(env.stateDir, 2);
  await first.notifyCheckpointComplete();
  print(`   checkpoint 2 complete → notifyCheckpointComplete → commitPrepared() ✓`);
  const afterBarrier = await first.pollAndProcess();
  print(`   polled ${describe(env, afterBarrier)} → state updated, acks buffered`);
  const snapshot3 = await first.snapshotState(3);
  print(
    `   checkpoint 3: prepareAcknowledgements(${snapshot3.acks}) → pending in transaction {producerId ${snapshot3.transaction.producerId}, epoch ${snapshot3.transaction.producerEpoch}}`,
  );
  // Another task fails before checkpoint 3 completes (a long GC pause, a lost
  // node): the job restarts from checkpoint 2. Attempt 1's consumer connection
  // drops (here: close()); checkpoint 3's acks stay pending in their transaction.
  await first.consumer.close();
  print(`   ✗ another task fails before checkpoint 3 completes: the job restarts from checkpoint 2, checkpoint 3's transaction still prepared`);

  // 3. Attempt 2: restore the latest checkpoint, finish its transaction, go on.
  const restored = latestCheckpoint<Checkpoint>(env.stateDir)!;
  print(`3. attempt 2 restores checkpoint ${restored.checkpointId}: ${describeTotals(restored.state.totals)}`);
  let recovery: ShareSourceSummary['recovery'] = null;
  if (restored.state.transaction) {
    recovery = await TransactionalShareAcknowledger.completeTransaction(
      { bootstrapServers: bootstrap, logger: env.logger },
      restoreTransaction(restored.state.transaction),
      'commit',
    );
    print(
      `   completeTransaction(checkpoint ${restored.checkpointId}'s transaction, 'commit') → ${recovery}` +
        (recovery === 'unknown'
          ? ` — checkpoint ${restored.checkpointId}'s ended before (the coordinator keeps only the last state); the transaction open was checkpoint 3's: aborted, its acks discarded`
          : ''),
    );
  }
  const second = new ShareSourceTask(env, groupId, transactionalId, restored.state.totals);
  await second.start();
  print(`   new consumer and acknowledger; initTransactions() fences attempt 1`);
  const redelivered = new Set<string>();
  const accounted = (): number => countedIds(second.totals).length + 1; // + the rejected reading
  while (accounted() < READING_COUNT) {
    records = await second.pollAndProcess();
    for (const r of records) {
      if (isThisRun(env, r) && afterBarrier.some((a) => a.partition === r.partition && a.offset === r.offset)) redelivered.add(position(r));
    }
    print(`   polled ${describe(env, records)} → state updated, acks buffered`);
  }
  const snapshot4 = await second.snapshotState(4);
  completeCheckpoint(env.stateDir, 4);
  await second.notifyCheckpointComplete();
  print(`   checkpoint 4: prepareAcknowledgements(${snapshot4.acks}), saved, complete; notifyCheckpointComplete → commitPrepared() ✓`);

  // 4. Attempt 1 comes back from its pause and tries to commit.
  let zombieError: unknown = null;
  try {
    await first.acknowledger.commitPrepared();
  } catch (error) {
    zombieError = error;
  }
  const zombieFenced = zombieError instanceof ProducerFencedError;
  print(
    `4. attempt 1 comes back (it was only paused) and calls commitPrepared(): ${zombieFenced ? 'ProducerFencedError — fenced, as it must be' : String(zombieError ?? 'it succeeded')}`,
  );
  await first.acknowledger.close();

  // 5. Verify: every valid reading counted exactly once, the malformed one rejected, nothing left.
  const leftOver = (await second.consumer.poll(300)).filter((r) => isThisRun(env, r)).length;
  await second.consumer.close();
  await second.acknowledger.close();
  const ids = countedIds(second.totals);
  const expected = Array.from({ length: READING_COUNT }, (_, i) => i).filter((i) => i !== MALFORMED);
  const { lost, duplicated } = exactlyOnce(ids, expected);
  const rejected = ids.includes(MALFORMED) ? 0 : 1;
  print(`5. final state: ${describeTotals(second.totals)}`);
  print(`   ${ids.length} readings counted, lost ${lost}, duplicated ${duplicated}; reading ${MALFORMED} rejected; ${leftOver} left to deliver`);

  const problems: string[] = [];
  if (lost > 0) problems.push(`${lost} reading(s) lost`);
  if (duplicated > 0) problems.push(`${duplicated} reading(s) counted twice`);
  if (ids.length !== expected.length) problems.push(`${ids.length} readings counted, expected ${expected.length}`);
  const readAfterBarrier = afterBarrier.filter((r) => isThisRun(env, r)).length;
  if (redelivered.size !== readAfterBarrier) problems.push(`${redelivered.size} of the ${readAfterBarrier} readings read after checkpoint 2 were redelivered`);
  if (recovery !== 'unknown')
    problems.push(
      `completing checkpoint 2's transaction after the restart: ${recovery ?? 'did not happen'}; expected 'unknown' (checkpoint 3's open instead, aborted)`,
    );
  if (!zombieFenced) problems.push('the old instance was not fenced');
  if (leftOver > 0) problems.push(`${leftOver} reading(s) delivered again after the last checkpoint`);

  return {
    ...finish(
      env,
      NAME,
      `${READING_COUNT} readings in, ${ids.length} counted exactly once and 1 rejected across a restart from checkpoint 2 while checkpoint 3 was prepared; its acks aborted, ${redelivered.size} readings redelivered; lost ${lost}, duplicated ${duplicated}`,
      problems,
    ),
    inputs: READING_COUNT,
    counted: ids.length,
    rejected,
    redeliveredAfterRestart: redelivered.size,
    recoveredFromCheckpoint: restored.state.transaction !== undefined,
    recovery,
    zombieFenced,
    lost,
    duplicated,
    leftOver,
  };
}

function countedIds(totals: Totals): number[] {
  return Object.values(totals).flatMap((t) => t.readings);
}

function describe(env: ExampleEnvironment, records: ShareConsumerRecord[]): string {
  const mine = records.filter((r) => isThisRun(env, r));
  const others = records.length - mine.length;
  const readings = mine.map((r) => {
    const reading = JSON.parse(text(r.value)) as Reading;
    return `#${reading.reading}${r.deliveryCount > 1 ? ` (delivery ${r.deliveryCount})` : ''}`;
  });
  if (others > 0) readings.push(`${others} of earlier runs (accepted, not counted)`);
  return readings.join(', ');
}

function describeTotals(totals: Totals): string {
  const sensors = Object.keys(totals).sort();
  if (sensors.length === 0) return 'no readings yet';
  return sensors
    .map((s) => {
      const t = totals[s]!;
      return `${s} ${t.readings.length} readings avg ${(t.sumCelsius / t.readings.length).toFixed(1)} °C`;
    })
    .join(', ');
}
