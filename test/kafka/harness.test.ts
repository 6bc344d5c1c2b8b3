/**
 * The Kafka the harness starts is the one the other files rely on: Kafka 4.4
 * with Transactions V2 and share groups finalized, two-phase commit allowed,
 * and without KIP-1289's APIs (95, 96) — which is what the KIP-1289 file
 * tests our client against.
 */
import { describe, expect, it } from 'vitest';
import { KafkaConnection } from '../../connection/connection.js';
import { ApiVersionsRequest, ApiVersionsResponse, DescribeConfigsRequest, DescribeConfigsResponse } from '../../generated/index.js';
import { kafka } from './support/cluster.js';
import { clusterIdOf } from './support/kafka.js';

async function apiVersions(bootstrap: string): Promise<ApiVersionsResponse> {
  const [host, port] = bootstrap.split(':');
  const c = await KafkaConnection.connect({ host: host!, port: Number(port), requestTimeoutMs: 10_000 });
  try {
    return (await c.send(
      ApiVersionsRequest,
      ApiVersionsRequest.create({ clientSoftwareName: 'kipgen', clientSoftwareVersion: '0' }),
      3,
      ApiVersionsResponse,
    )) as ApiVersionsResponse;
  } finally {
    await c.close();
  }
}

describe('the Kafka 4.4 of test:kafka', () => {
  it('finalizes transaction.version 2 and share.version ≥ 1, and has neither AddShareAcksToTxn (95) nor TxnShareAcknowledge (96)', async () => {
    const v = await apiVersions(kafka().bootstrap);
    const feature = (name: string): number | undefined => v.finalizedFeatures.find((f) => f.name === name)?.maxVersionLevel;
    expect(feature('transaction.version')).toBe(2);
    expect(feature('share.version')).toBeGreaterThanOrEqual(1);
    const keys = new Set(v.apiKeys.map((k) => k.apiKey));
    for (const key of [0, 1, 22, 24, 26, 28, 76, 77, 78, 79]) expect(keys.has(key), `API ${key}`).toBe(true);
    expect(keys.has(95)).toBe(false);
    expect(keys.has(96)).toBe(false);
    // InitProducerId v6 carries KIP-939's Enable2Pc; 4.4 advertises it only with unstable.api.versions.enable.
    expect(v.apiKeys.find((k) => k.apiKey === 22)!.maxVersion).toBeGreaterThanOrEqual(6);
  });

  it('runs with transaction.two.phase.commit.enable=true, unstable API versions and the StandardAuthorizer', async () => {
    const [host, port] = kafka().bootstrap.split(':');
    const c = await KafkaConnection.connect({ host: host!, port: Number(port), requestTimeoutMs: 10_000 });
    try {
      const res = (await c.send(
        DescribeConfigsRequest,
        DescribeConfigsRequest.create({
          resources: [
            {
              resourceType: 4,
              resourceName: '1',
              configurationKeys: ['transaction.two.phase.commit.enable', 'unstable.api.versions.enable', 'authorizer.class.name'],
            },
          ],
        }),
        4,
        DescribeConfigsResponse,
      )) as DescribeConfigsResponse;
      const configs = Object.fromEntries(res.results[0]!.configs.map((e) => [e.name, e.value]));
      expect(configs).toEqual({
        'transaction.two.phase.commit.enable': 'true',
        'unstable.api.versions.enable': 'true',
        'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      });
    } finally {
      await c.close();
    }
  });
});

describe('the harness', () => {
  it('never formats storage with a cluster id that starts with "-" (kafka-storage would read it as a flag), as Kafka\'s Uuid.randomUuid', () => {
    const ids = Array.from({ length: 5_000 }, () => clusterIdOf());
    expect(ids.filter((id) => id.startsWith('-'))).toEqual([]);
    expect(ids.every((id) => /^[A-Za-z0-9_-]{22}$/.test(id))).toBe(true);
  });
});
