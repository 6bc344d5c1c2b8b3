/**
 * A kafkajs 2.2.4 session against a kipgen broker: a transactional producer
 * (InitProducerId, AddPartitionsToTxn, Produce, AddOffsetsToTxn +
 * TxnOffsetCommit via sendOffsets, EndTxn) that commits, aborts and commits
 * again, then admin metadata calls. Shared by the kafkajs and Wireshark tests.
 */
import kafkajs from 'kafkajs';

const { Kafka, logLevel } = kafkajs;

export const KAFKAJS_CLIENT_ID = 'kafkajs-interop';

/** Binary keys, values and headers, so that byte-exactness is tested, not just UTF-8 text. */
export const BINARY = Buffer.from([0x00, 0xff, 0x80, 0x7f, 0x0a, 0x0d, 0xc3, 0x28]);

export interface KafkajsMessage {
  partition: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer>;
}

export const COMMITTED_1: KafkajsMessage[] = [
  { partition: 0, key: Buffer.from('k-0'), value: Buffer.from('committed-0'), headers: { trace: Buffer.from('t-0'), bin: BINARY } },
  { partition: 1, key: BINARY, value: Buffer.concat([Buffer.from('committed-1:'), BINARY]), headers: { 'é-ключ': Buffer.from('значение') } },
  { partition: 0, key: null, value: Buffer.alloc(0), headers: {} },
];
export const ABORTED: KafkajsMessage[] = [
  { partition: 0, key: Buffer.from('k-x'), value: Buffer.from('aborted-0'), headers: { trace: Buffer.from('t-x') } },
  { partition: 1, key: Buffer.from('k-y'), value: Buffer.from('aborted-1'), headers: {} },
];
export const COMMITTED_2: KafkajsMessage[] = [
  { partition: 1, key: Buffer.from('k-2'), value: Buffer.from('committed-2'), headers: { last: Buffer.from('yes') } },
];

export interface KafkajsSession {
  listTopics: string[];
  topicMetadata: { name: string; partitions: { partitionId: number; leader: number; replicas: number[]; isr: number[] }[] }[];
  errors: string[];
}

export async function runKafkajsSession(port: number, topic: string, groupId: string, offsetToCommit: string): Promise<KafkajsSession> {
  const errors: string[] = [];
  const kafka = new Kafka({
    clientId: KAFKAJS_CLIENT_ID,
    brokers: [`127.0.0.1:${port}`],
    logLevel: logLevel.ERROR,
    logCreator: () => (entry) => {
      errors.push(`${entry.namespace}: ${entry.log.message}${entry.log.error ? ` (${entry.log.error})` : ''}`);
    },
    retry: { retries: 8, initialRetryTime: 50, maxRetryTime: 500 },
  });
  const send = (messages: KafkajsMessage[]) => messages.map((m) => ({ partition: m.partition, key: m.key, value: m.value, headers: m.headers }));

  const producer = kafka.producer({ transactionalId: 'kafkajs-interop-tx', idempotent: true, maxInFlightRequests: 1, transactionTimeout: 30_000 });
  await producer.connect();
  try {
    const t1 = await producer.transaction();
    await t1.send({ topic, messages: send(COMMITTED_1), acks: -1 });
    await t1.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: offsetToCommit }] }] });
    await t1.commit();

    const t2 = await producer.transaction();
    await t2.send({ topic, messages: send(ABORTED), acks: -1 });
    await t2.abort();

    const t3 = await producer.transaction();
    await t3.send({ topic, messages: send(COMMITTED_2), acks: -1 });
    await t3.commit();
  } finally {
    await producer.disconnect();
  }

  const admin = kafka.admin();
  await admin.connect();
  try {
    const listTopics = await admin.listTopics();
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    return { listTopics, topicMetadata: topics as KafkajsSession['topicMetadata'], errors };
  } finally {
    await admin.disconnect();
  }
}
