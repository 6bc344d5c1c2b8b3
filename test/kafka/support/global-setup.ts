/**
 * The kafka project's globalSetup: one Kafka 4.4 JVM for the whole run
 * (starting one costs 15–60 s on a shared 2-core machine), handed to the test
 * files through vitest's provide/inject as a `KafkaInfo`. Tests stay
 * independent by naming their own topics, groups and transactional ids
 * (`unique()` in ./cluster.ts).
 *
 * With KIPGEN_KAFKA_INFO=<file> (written by ./serve.ts) the run uses that
 * already running Kafka instead and leaves it running.
 */
import * as fs from 'node:fs';
import type { TestProject } from 'vitest/node';
import { startKafka } from './kafka.js';
import { kafkaInfo, type KafkaInfo } from './cluster.js';

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const reuse = process.env.KIPGEN_KAFKA_INFO;
  if (reuse !== undefined && reuse !== '') {
    project.provide('kafka', JSON.parse(fs.readFileSync(reuse, 'utf8')) as KafkaInfo);
    return undefined;
  }
  const began = Date.now();
  const kafka = await startKafka();
  project.provide('kafka', kafkaInfo(kafka));
  process.stdout.write(
    `test:kafka: Kafka 4.4 serving on ${kafka.bootstrap} (PLAINTEXT) and ${kafka.saslSsl.bootstrap} (SASL_SSL): ${Date.now() - began} ms to start (JVM to ready ${kafka.startMs} ms)\n`,
  );
  return async () => {
    await kafka.stop();
  };
}
