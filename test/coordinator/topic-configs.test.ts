// What a topic's configuration decides in the TopicInfo the cluster keeps (codec, codec level, timestamp
// type) is derived from the configuration every time it is set: nothing survives from the entry before.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Cluster } from '../../coordinator/cluster.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function cluster(dataDir?: string): { cluster: Cluster; dataDir: string } {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'kipgen-topic-configs-'));
  if (dataDir === undefined) dirs.push(dir);
  const made = new Cluster({
    nodeId: 0,
    nodes: [{ nodeId: 0, host: '127.0.0.1', port: 9092 }],
    clusterId: 'topic-configs-test',
    dataDir: dir,
    topics: [],
    transactionStatePartitions: 1,
    consumerOffsetsPartitions: 1,
  });
  return { cluster: made, dataDir: dir };
}

describe('a topic config set at run time', () => {
  it('removing a codec level drops it: the codec falls back to its default level', () => {
    const { cluster: c } = cluster();
    c.createTopic('orders', 1, { 'compression.type': 'zstd', 'compression.zstd.level': '9' });
    expect(c.topicByName('orders')).toMatchObject({ compressionType: 'zstd', compressionLevel: 9 });
    c.setTopicConfigs('orders', { 'compression.type': 'zstd' });
    expect(c.topicByName('orders')?.compressionType).toBe('zstd');
    expect(c.topicByName('orders')?.compressionLevel).toBeUndefined();
  });

  it('a codec without levels carries none over from the codec before', () => {
    const { cluster: c } = cluster();
    c.createTopic('orders', 1, { 'compression.type': 'gzip', 'compression.gzip.level': '3' });
    c.setTopicConfigs('orders', { 'compression.type': 'lz4', 'compression.gzip.level': '3' });
    expect(c.topicByName('orders')?.compressionType).toBe('lz4');
    expect(c.topicByName('orders')?.compressionLevel).toBeUndefined();
  });

  it('message.timestamp.type removed is CreateTime again; growing the topic keeps what its configuration says', () => {
    const { cluster: c, dataDir } = cluster();
    c.createTopic('orders', 1, { 'message.timestamp.type': 'LogAppendTime', 'compression.type': 'zstd', 'compression.zstd.level': '5' });
    c.growTopic('orders', 3);
    expect(c.topicByName('orders')).toMatchObject({ partitions: 3, messageTimestampType: 'LogAppendTime', compressionType: 'zstd', compressionLevel: 5 });
    c.setTopicConfigs('orders', {});
    expect(c.topicByName('orders')).toMatchObject({ partitions: 3, messageTimestampType: 'CreateTime', compressionType: 'producer' });
    expect(c.topicByName('orders')?.compressionLevel).toBeUndefined();
    // A restart on the same data directory derives the same.
    const { cluster: again } = cluster(dataDir);
    expect(again.topicByName('orders')).toMatchObject({ partitions: 3, messageTimestampType: 'CreateTime', compressionType: 'producer' });
    expect(again.topicByName('orders')?.compressionLevel).toBeUndefined();
  });
});
