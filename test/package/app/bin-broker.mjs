// The kipgen-broker command as a user runs it (npx kipgen-broker): a spawned broker
// process, then @kipgen/client's producer and consumer against it, zstd batches
// (the codec library loaded by the broker's one-file build as installed), and a
// clean stop on SIGTERM.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KafkaConsumer, KafkaProducer } from '@kipgen/client';

const dataDir = mkdtempSync(join(tmpdir(), 'kipgen-bin-'));
const broker = spawn(join('node_modules', '.bin', 'kipgen-broker'), ['--port', '0', '--data-dir', dataDir, '--topic', 'events:1'], {
  stdio: ['ignore', 'pipe', 'pipe'],
});
let stderr = '';
broker.stderr.on('data', (d) => (stderr += d));
const exited = new Promise((resolve) => broker.on('exit', (code, signal) => resolve({ code, signal })));
try {
  const listening = await new Promise((resolve, reject) => {
    let out = '';
    broker.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.includes('"listening"'));
      if (line !== undefined) resolve(JSON.parse(line));
    });
    exited.then(() => reject(new Error(`kipgen-broker exited before listening:\n${stderr}`)));
    setTimeout(() => reject(new Error(`kipgen-broker did not listen in 30 s:\n${stderr}`)), 30_000).unref();
  });
  const bootstrapServers = `127.0.0.1:${listening.port}`;
  const producer = new KafkaProducer({ bootstrapServers, compressionType: 'zstd', logger: null });
  for (const value of ['a', 'b', 'c']) await producer.send({ topic: 'events', value });
  await producer.close();

  const consumer = new KafkaConsumer({ bootstrapServers, logger: null, autoOffsetReset: 'earliest' });
  consumer.assign([{ topic: 'events', partition: 0 }]);
  const values = [];
  const deadline = Date.now() + 20_000;
  while (values.length < 3 && Date.now() < deadline) for (const r of await consumer.poll(500)) values.push(Buffer.from(r.value).toString());
  await consumer.close();
  broker.kill('SIGTERM');
  console.log(JSON.stringify({ values, exit: await exited }));
} finally {
  broker.kill('SIGKILL');
  await exited;
  rmSync(dataDir, { recursive: true, force: true });
}
