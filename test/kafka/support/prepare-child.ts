/**
 * A producer process for the two-phase-commit tests: it runs the transactions
 * it is given (each committed, or prepared and left open), printing one JSON
 * line per step — `{"prepared":"<PreparedTxnState>"}` after prepareTransaction,
 * `{"committed":n}` after a commit — and after the last step waits to be
 * killed (`{"waiting":true}`), as a job does that dies between a checkpoint's
 * prepare and its completion.
 *
 *   node --import tsx test/kafka/support/prepare-child.ts '{"bootstrap":…,"transactionalId":…,"topic":…,"steps":[{"values":["a"],"end":"commit"},{"values":["b"],"end":"prepare"}]}'
 */
import { KafkaProducer } from '../../../client/index.js';

interface Step {
  values: string[];
  end: 'commit' | 'prepare';
}
const job = JSON.parse(process.argv[2] ?? '{}') as { bootstrap: string; transactionalId: string; topic: string; steps: Step[] };

const say = (o: object): void => {
  process.stdout.write(`${JSON.stringify(o)}\n`);
};

const producer = new KafkaProducer({
  bootstrapServers: job.bootstrap,
  transactionalId: job.transactionalId,
  transactionTwoPhaseCommitEnable: true,
  lingerMs: 1,
  maxBlockMs: 30_000,
  logger: null,
  metricsRegistry: null,
});
await producer.initTransactions();
for (const [i, step] of job.steps.entries()) {
  producer.beginTransaction();
  for (const value of step.values) void producer.send({ topic: job.topic, key: `k${i}`, value });
  if (step.end === 'commit') {
    await producer.commitTransaction();
    say({ committed: i });
  } else {
    const state = await producer.prepareTransaction();
    say({ prepared: String(state) });
    if (i < job.steps.length - 1) {
      await producer.completeTransaction(state);
      say({ committed: i });
    }
  }
}
say({ waiting: true });
setInterval(() => undefined, 60_000);
