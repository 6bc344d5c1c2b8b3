import { afterEach, describe, expect, it } from 'vitest';
import { startBroker, type Broker } from '../../coordinator/broker.js';
import { KafkaProducer, KafkaTimeoutError } from '../../client/index.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Kafka's producer asks the broker to create a topic it sends to and does not
// find (allow.auto.create.topics, default true); the broker decides
// (auto.create.topics.enable). When the topic never appears, the max.block.ms
// timeout says why instead of leaving the user to guess.
describe('a producer sending to a topic the cluster does not have', () => {
  let broker: Broker | undefined;
  let dataDir = '';
  const producers: KafkaProducer[] = [];

  async function start(autoCreateTopics: boolean): Promise<string> {
    dataDir = mkdtempSync(join(tmpdir(), 'kipgen-auto-create-'));
    broker = await startBroker({ port: 0, dataDir, autoCreateTopics }, { shareCoordinator: null });
    return `127.0.0.1:${broker.port}`;
  }
  function producer(config: ConstructorParameters<typeof KafkaProducer>[0]): KafkaProducer {
    const p = new KafkaProducer({ logger: null, ...config });
    producers.push(p);
    return p;
  }
  afterEach(async () => {
    await Promise.all(producers.splice(0).map((p) => p.close()));
    await broker?.close();
    broker = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('gets it created by the broker, as Kafka producer does by default, and writes to it', async () => {
    const bootstrap = await start(true);
    const p = producer({ bootstrapServers: bootstrap, maxBlockMs: 10_000 });
    const sent = await p.send({ topic: 'made-on-first-send', value: 'hello' });
    expect(sent).toMatchObject({ topic: 'made-on-first-send', offset: 0n });
    expect(broker!.dump()).toContain('made-on-first-send');
  });

  it('with allowAutoCreateTopics: false, times out naming the setting', async () => {
    const bootstrap = await start(true);
    const p = producer({ bootstrapServers: bootstrap, maxBlockMs: 600, allowAutoCreateTopics: false });
    const error = await p.send({ topic: 'never-made', value: 'x' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(KafkaTimeoutError);
    expect((error as Error).message).toBe(
      'topic never-made not present in metadata after 600 ms (max.block.ms): the broker answers that the topic does not exist, ' +
        'and this producer does not ask it to create topics (allowAutoCreateTopics: false): create the topic first',
    );
  });

  it('on a broker that does not auto-create, times out saying the broker did not create it', async () => {
    const bootstrap = await start(false);
    const p = producer({ bootstrapServers: bootstrap, maxBlockMs: 600 });
    await expect(p.send({ topic: 'refused', value: 'x' })).rejects.toThrow(
      'topic refused not present in metadata after 600 ms (max.block.ms): the broker answers that the topic does not exist and did not create it when asked ' +
        '(its auto.create.topics.enable is off, or it refused): create the topic first',
    );
  });
});
