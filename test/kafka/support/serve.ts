/**
 * For working on the kafka tests: starts one Kafka 4.4 and keeps it until
 * Ctrl-C, writing its KafkaInfo to the file named by the first argument, so
 * that `KIPGEN_KAFKA_INFO=<file> npx vitest run --project kafka test/kafka/x.test.ts`
 * runs against it without a start per run.
 *
 *   node --import tsx test/kafka/support/serve.ts /tmp/kipgen-kafka-info.json
 */
import * as fs from 'node:fs';
import { startKafka } from './kafka.js';
import { kafkaInfo } from './cluster.js';

const file = process.argv[2];
if (file === undefined) {
  process.stderr.write('usage: node --import tsx test/kafka/support/serve.ts <info.json>\n');
  process.exit(2);
}
const kafka = await startKafka();
fs.writeFileSync(file, JSON.stringify(kafkaInfo(kafka)));
process.stdout.write(
  `Kafka 4.4 on ${kafka.bootstrap} (SASL_SSL ${kafka.saslSsl.bootstrap}), JVM to ready ${kafka.startMs} ms; info in ${file}; log ${kafka.logFile}\n`,
);
const stop = (): void => {
  void kafka.stop().then(() => {
    fs.rmSync(file, { force: true });
    process.exit(0);
  });
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
