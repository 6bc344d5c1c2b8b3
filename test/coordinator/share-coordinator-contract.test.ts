/**
 * The share coordinator contract (coordinator/broker-context.ts): the share APIs are
 * definitions in coordinator/apis/ that call a registered ShareCoordinator's typed
 * operations; ApiVersions advertises each exactly while a coordinator offering its
 * operations is registered (TxnShareAcknowledge also needs kip1289).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ShareCoordinator, ShareGroupOperations } from '../../coordinator/broker-context.js';
import { startBroker, type Broker } from '../../coordinator/broker.js';
import type { BrokerConfigInput } from '../../coordinator/config.js';
import { FAST, TestClient, tempDir } from './support/broker-harness.js';

const SHARE_KEYS = [76, 77, 78, 79, 96];

let broker: Broker | undefined;
let client: TestClient | undefined;
afterEach(async () => {
  await client?.close();
  await broker?.close();
  client = undefined;
  broker = undefined;
});

async function start(shareCoordinator: (() => ShareCoordinator) | null | undefined, config: BrokerConfigInput = {}): Promise<void> {
  broker = await startBroker(
    { host: '127.0.0.1', port: 0, ...FAST, dataDir: tempDir(), ...config },
    { ...(shareCoordinator === undefined ? {} : { shareCoordinator }), log: () => {} },
  );
  client = await TestClient.connect(broker.port);
}

/** The share API keys ApiVersions advertises, with their ranges. */
async function advertisedShareApis(): Promise<Map<number, [number, number]>> {
  const r = await client!.call(18, {}, 3);
  return new Map(
    r.apiKeys
      .filter((k: { apiKey: number }) => SHARE_KEYS.includes(k.apiKey))
      .map((k: { apiKey: number; minVersion: number; maxVersion: number }) => [k.apiKey, [k.minVersion, k.maxVersion]]),
  );
}

const quiet = { recover: async () => {}, completeTransaction: async () => {}, dump: () => '', close: async () => {} };

describe('the share APIs follow the registered share coordinator', () => {
  it("kipgen's share coordinator: all five, in the codecs' full ranges", async () => {
    await start(undefined);
    expect([...(await advertisedShareApis())].sort((a, b) => a[0] - b[0])).toEqual([
      [76, [1, 1]],
      [77, [1, 1]],
      [78, [1, 2]],
      [79, [1, 2]],
      [96, [0, 1]],
    ]);
  });

  it('TxnShareAcknowledge only with kip1289 on', async () => {
    await start(undefined, { kip1289: false });
    expect([...(await advertisedShareApis()).keys()].sort()).toEqual([76, 77, 78, 79]);
  });

  it('a coordinator that offers no operations serves none; one that offers group operations serves ShareGroupHeartbeat and ShareGroupDescribe, answered by its operation', async () => {
    await start(() => quiet);
    expect((await advertisedShareApis()).size).toBe(0);

    const described: string[][] = [];
    const groups: ShareGroupOperations = {
      heartbeat: async () => ({ errorCode: 0, errorMessage: null, memberId: 'm', memberEpoch: 1, heartbeatIntervalMs: 5, assignment: null }),
      describeGroups: (groupIds) => {
        described.push([...groupIds]);
        return groupIds.map((groupId) => ({
          groupId,
          errorCode: 0,
          errorMessage: null,
          groupState: 'Empty',
          detail: { groupEpoch: 3, assignmentEpoch: 2, assignorName: 'test', members: [] },
        }));
      },
    };
    await broker!.registerShareCoordinator({ ...quiet, groups });
    expect([...(await advertisedShareApis()).keys()].sort()).toEqual([76, 77]);
    const r = await client!.call(77, { groupIds: ['g1'], includeAuthorizedOperations: false }, 1);
    expect(described).toEqual([['g1']]);
    expect(r.groups).toMatchObject([
      { groupId: 'g1', errorCode: 0, groupState: 'Empty', groupEpoch: 3, assignmentEpoch: 2, assignorName: 'test', members: [] },
    ]);
  });
});
