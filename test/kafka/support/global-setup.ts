/**
 * The kafka project's globalSetup: one Kafka 4.4 JVM for the whole run
 * (starting one costs 10–20 s on a shared 2-core machine), handed to the test
 * files through vitest's provide/inject as a `KafkaInfo`. Tests stay
 * independent by naming their own topics, groups and transactional ids
 * (`unique()` in ./cluster.ts).
 */
import type { TestProject } from 'vitest/node';
import { startKafka } from './kafka.js';
import type { KafkaInfo } from './cluster.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const began = Date.now();
  const kafka = await startKafka();
  const info: KafkaInfo = {
    bootstrap: kafka.bootstrap,
    saslSsl: {
      bootstrap: kafka.saslSsl.bootstrap,
      caPem: kafka.saslSsl.caPem,
      truststorePath: kafka.saslSsl.truststorePath,
      mechanisms: [...kafka.saslSsl.mechanisms],
      superUser: kafka.saslSsl.superUser,
      users: [...kafka.saslSsl.users],
    },
    javaClasspath: kafka.javaClasspath,
    logFile: kafka.logFile,
  };
  project.provide('kafka', info);
  process.stdout.write(`test:kafka: Kafka 4.4 serving on ${kafka.bootstrap} (PLAINTEXT) and ${kafka.saslSsl.bootstrap} (SASL_SSL): ${Date.now() - began} ms to start (JVM to ready ${kafka.startMs} ms)\n`);
  return async () => {
    await kafka.stop();
  };
}
