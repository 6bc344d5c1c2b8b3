import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareWireEqual } from '../../generator/diff/compare.js';
import { messageLayout, type MessageLayout } from '../../generator/diff/layout.js';
import { loadTree } from '../../generator/diff/load-tree.js';
import { FIXTURES, REPO, sharedDir } from './support.js';

// Every version our message-schemas declare of an upstream Kafka API must put
// exactly upstream's bytes on the wire (names and docs may differ).
const shared = sharedDir();
if (shared === undefined) {
  console.warn('wire-equal: ../shared not found (set KIPGEN_SHARED): message-schemas are NOT checked against upstream Kafka in this run');
}

const layouts = (arg: string): MessageLayout[] => {
  const tree = loadTree(arg);
  expect(tree.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return tree.specs.map(messageLayout);
};

describe.runIf(shared !== undefined)('message-schemas vs ../shared/kafka-schemas', () => {
  // group-coordinator too: its records (OffsetCommit/GroupMetadata) share record types with the share coordinator's, so they must be matched against their own.
  const upstreamArg = ['clients', 'transaction-coordinator', 'share-coordinator', 'group-coordinator']
    .map((d) => join(shared ?? '', 'kafka-schemas', d))
    .join(',');

  it('is wire-equal for every version both declare; only the KIP-1289 specs are not upstream', () => {
    const report = compareWireEqual(layouts(upstreamArg), layouts(join(REPO, 'message-schemas')));
    expect(report.changes).toEqual([]);
    expect(report.notUpstream).toEqual(['AddShareAcksToTxnRequest', 'AddShareAcksToTxnResponse', 'TxnShareAcknowledgeRequest', 'TxnShareAcknowledgeResponse']);
    // Every spec of ours but the four KIP-1289 ones was compared.
    const ours = readdirSync(join(REPO, 'message-schemas')).filter((f) => f.endsWith('.json'));
    expect(report.compared.length).toBe(ours.length - report.notUpstream.length);
    expect(report.compared.length).toBeGreaterThanOrEqual(106);
    expect(report.compared.find((c) => c.name === 'FetchRequest')!.versions).toBe('4-18');
  });

  it('would catch a difference: ProduceRequest with its fields in reverse order', () => {
    const upstream = layouts(upstreamArg);
    const ours = upstream
      .filter((l) => l.name === 'ProduceRequest')
      .map((l) => ({ ...l, versions: new Map([...l.versions].map(([v, vl]) => [v, { ...vl, fields: [...vl.fields].reverse() }])) }));
    const report = compareWireEqual(upstream, ours);
    expect(report.changes.length).toBeGreaterThan(0);
    expect(new Set(report.changes.map((c) => c.message))).toEqual(new Set(['ProduceRequest']));
  });
});

describe('wire equality on our own fixtures', () => {
  const dir = join(FIXTURES, 'wire-equal');

  it('ignores names and docs, and lists specs that upstream lacks', () => {
    const report = compareWireEqual(layouts(join(dir, 'upstream')), layouts(join(dir, 'ours-equal')));
    expect(report.changes).toEqual([]);
    expect(report.notUpstream).toEqual(['KipThingRequest']);
    expect(report.compared).toEqual([
      { name: 'WidgetRequest', upstream: 'WidgetRequest', versions: '0-1' },
      { name: 'WidgetResponse', upstream: 'WidgetResponse', versions: '0-1' },
    ]);
  });

  it('reports a type difference and a version upstream does not have', () => {
    const report = compareWireEqual(layouts(join(dir, 'upstream')), layouts(join(dir, 'ours-different')));
    expect(report.changes.map((c) => `${c.message}:${c.rule}@${c.versions}:${c.path ?? ''}:${c.detail}`)).toEqual([
      'WidgetRequest:field-type-changed@0-1:MemberEpoch:int32 → int64',
      'WidgetRequest:version-not-upstream@2::ours declares version 2; upstream WidgetRequest has 0-1',
      'WidgetResponse:version-not-upstream@2::ours declares version 2; upstream WidgetResponse has 0-1',
    ]);
  });
});
