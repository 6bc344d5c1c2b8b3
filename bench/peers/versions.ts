// The API versions each peer is benchmarked at: the highest it supports (read from its
// source). Kept here, free of imports, so that the plan can be made without loading the
// libraries (platformatic takes ~1.3 s to import); each adapter checks these against the
// library when it loads and refuses to run if they drifted.
export const PEER_VERSIONS = {
  kafkajs: {
    libVersion: '2.2.4',
    Produce: 7, // 0-7 (RecordBatch v2 from v3)
    Metadata: 6, // 0-6
    Fetch: 11, // 0-11
    FindCoordinator: 2, // 0-2
    EndTxn: 1, // 0-1
    InitProducerId: 1, // 0-1
  },
  platformatic: {
    libVersion: '2.12.1',
    Produce: 11, // 3-11
    Metadata: 12, // 0-12
    Fetch: 17, // 4-17
    FindCoordinator: 6, // 0-6
    EndTxn: 4, // 0-4
    InitProducerId: 5, // 0-5
  },
} as const;

export function assertVersions(lib: keyof typeof PEER_VERSIONS, actual: Record<string, number | string>): void {
  const want = PEER_VERSIONS[lib] as Record<string, number | string>;
  const drift = Object.keys(want).filter((k) => want[k] !== actual[k]);
  if (drift.length) {
    throw new Error(
      `${lib}: benchmarked versions drifted (${drift.map((k) => `${k}: expected ${want[k]}, library has ${actual[k]}`).join('; ')}); update bench/peers/versions.ts`,
    );
  }
}
