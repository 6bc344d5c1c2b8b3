import { afterEach, describe, expect, it, vi } from 'vitest';
import { startBroker, type Broker } from '../../coordinator/broker.js';
import { KafkaProducer, KafkaShareConsumer } from '../../client/index.js';
import { IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse } from '../../generated/index.js';
import { KafkaConnection } from '../../connection/connection.js';

// A kafkajs habit: produce, then start a consumer and expect the records. A share
// group starts at the log end by default (share.auto.offset.reset=latest, Kafka's
// GroupConfig default), so the consumer sees nothing; it now says why, once.
describe('a share consumer whose group starts at the log end of partitions that hold records', () => {
  let broker: Broker | undefined;
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => {});
    await broker?.close();
    broker = undefined;
  });

  async function start(): Promise<string> {
    broker = await startBroker({
      port: 0,
      topics: [
        { name: 'late', partitions: 2 },
        { name: 'empty', partitions: 1 },
      ],
      shareGroup: { heartbeatIntervalMs: 200 },
    });
    const bootstrapServers = `127.0.0.1:${broker.port}`;
    const producer = new KafkaProducer({ bootstrapServers, logger: null, metricsRegistry: null, lingerMs: 1 });
    await Promise.all([0, 1, 0].map((partition, i) => producer.send({ topic: 'late', partition, value: `order-${i}` })));
    await producer.close();
    return bootstrapServers;
  }

  function consumer(bootstrapServers: string, groupId: string, topic: string): { consumer: KafkaShareConsumer; warnings: string[] } {
    const warnings: string[] = [];
    const record = (line: string): void => void warnings.push(line);
    const c = new KafkaShareConsumer({
      bootstrapServers,
      groupId,
      clientId: groupId,
      fetchMaxWaitMs: 100,
      logger: { debug() {}, info() {}, warn: record, error: record },
    });
    closers.push(() => c.close(1_000));
    c.subscribe([topic]);
    return { consumer: c, warnings };
  }

  it('logs one line naming share.auto.offset.reset and how to change it', async () => {
    const bootstrapServers = await start();
    const { consumer: c, warnings } = consumer(bootstrapServers, 'late-readers', 'late');
    expect(await c.poll(3_000)).toEqual([]);
    await vi.waitFor(() => expect(warnings).toHaveLength(1), { timeout: 5_000 });
    expect(warnings[0]).toBe(
      "share consumer late-readers: share group late-readers has share.auto.offset.reset=latest (Kafka's default): a new group starts at the log end, " +
        'so the 3 record(s) already in late-0, late-1 are not delivered, only records produced from now on. To read from the start, set the group config ' +
        'share.auto.offset.reset=earliest before the group first consumes (IncrementalAlterConfigs on the GROUP resource, e.g. kafka-configs.sh ' +
        '--bootstrap-server <host:port> --alter --entity-type groups --entity-name late-readers --add-config share.auto.offset.reset=earliest; ' +
        "a kipgen broker's default for every group: shareGroup.autoOffsetReset 'earliest')",
    );
    // Once per consumer.
    expect(await c.poll(500)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(warnings).toHaveLength(1);
  });

  it('says nothing when the group is set to earliest (and reads the records), or when the partitions are empty', async () => {
    const bootstrapServers = await start();
    const connection = await KafkaConnection.connect({ host: '127.0.0.1', port: broker!.port, clientId: 'admin' });
    const altered = await connection.send(
      IncrementalAlterConfigsRequest,
      IncrementalAlterConfigsRequest.create({
        resources: [{ resourceType: 32, resourceName: 'early-readers', configs: [{ name: 'share.auto.offset.reset', configOperation: 0, value: 'earliest' }] }],
      }),
      1,
      IncrementalAlterConfigsResponse,
    );
    await connection.close();
    expect(altered.responses[0]!.errorCode).toBe(0);
    const early = consumer(bootstrapServers, 'early-readers', 'late');
    const seen: string[] = [];
    for (let i = 0; i < 20 && seen.length < 3; i++) seen.push(...(await early.consumer.poll(500)).map((r) => Buffer.from(r.value!).toString()));
    expect(seen.sort()).toEqual(['order-0', 'order-1', 'order-2']);

    const none = consumer(bootstrapServers, 'empty-readers', 'empty');
    expect(await none.consumer.poll(2_000)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(early.warnings).toEqual([]);
    expect(none.warnings).toEqual([]);
  });
});
