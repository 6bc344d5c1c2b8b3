import { describe, expect, it } from 'vitest';
import { ALWAYS, and, choose, FLEXIBLE, mentionsFlexible, NEVER, not, or, printCondition, test, versionCondition } from '../../generator/emit/conditions.js';
import { RuntimeImports } from '../../generator/emit/field-code.js';
import { structRanges } from '../../generator/emit/message-view.js';
import { structView } from '../../generator/emit/struct-view.js';
import { parseJavaDouble, parseSpec } from '../../generator/parse-spec.js';
import { SchemaSource } from '../../generator/source.js';
import type { MessageSpec } from '../../generator/spec.js';
import { MAX_VERSION, Versions } from '../../generator/versions.js';
import { regularVersions } from '../../generator/wire-rules.js';

// Unit tests of the generator's core, so that a bug shows up here rather than
// as a diff across every generated file.

function spec(fields: object[], top: object = {}): MessageSpec {
  const text = JSON.stringify({ apiKey: 900, type: 'request', name: 'UnitRequest', validVersions: '0-5', flexibleVersions: '3+', fields, ...top });
  const { spec: parsed, diagnostics } = parseSpec(SchemaSource.parse('unit.json', text));
  expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return parsed!;
}

const range = (text: string): Versions => Versions.parse(text);

describe('Versions', () => {
  it('parses the four forms, open ends at 32767', () => {
    expect([range('none'), range('3'), range('1-4'), range('2+')].map((v) => [v.lowest, v.highest])).toEqual([
      [0, -1],
      [3, 3],
      [1, 4],
      [2, MAX_VERSION],
    ]);
  });

  it("reads bounds as Java's Short.parseShort does: a + sign is allowed, a negative bound is refused", () => {
    expect(range('+2-+4').toString()).toBe('2-4');
    expect(range(' 1+ ').toString()).toBe('1+');
    expect(() => range('1--2')).toThrow(/Invalid version range/);
    expect(() => range('-1')).toThrow(/not a version range/);
    expect(() => range('1 - 2')).toThrow(/not a version range/);
    expect(() => range('32768')).toThrow(/exceeds 32767/);
  });

  it('intersects, covers and compares, with every empty range equal to none', () => {
    expect(range('1-4').intersect(range('3+')).toString()).toBe('3-4');
    expect(range('1-2').intersect(range('3+')).empty).toBe(true);
    expect(range('0+').covers(range('none'))).toBe(true);
    expect(range('none').covers(range('1'))).toBe(false);
    expect(range('2-5').covers(range('2-6'))).toBe(false);
    expect(new Versions(5, 3).equals(Versions.NONE)).toBe(true);
    expect(range('2+').openEnded).toBe(true);
    expect(range('2-32766').openEnded).toBe(false);
    expect([...range('2-4')]).toEqual([2, 3, 4]);
  });
});

describe('version conditions', () => {
  const within = range('0-5');
  const print = (versions: string, inside = within): string => printCondition(versionCondition(range(versions), inside));

  it('fold to always or never when the enclosing range decides them', () => {
    expect(versionCondition(range('0+'), within)).toEqual(ALWAYS);
    expect(versionCondition(range('0-5'), within)).toEqual(ALWAYS);
    expect(versionCondition(range('6+'), within)).toEqual(NEVER);
    expect(versionCondition(Versions.NONE, within)).toEqual(NEVER);
  });

  it('test only the bound the enclosing range does not already give', () => {
    expect(versionCondition(range('3+'), within)).toEqual({ kind: 'versions', lowest: 3, highest: undefined });
    expect(print('3+')).toBe('version >= 3');
    expect(print('0-2')).toBe('version <= 2');
    expect(print('2-3')).toBe('version >= 2 && version <= 3');
    expect(print('2')).toBe('version === 2');
    expect(print('3+', range('2-3'))).toBe('version >= 3');
    expect(print('3+', range('3-5'))).toBe('true');
  });

  it('combine with constants folded, and print with the parentheses precedence needs', () => {
    const v3 = versionCondition(range('3+'), within);
    expect(and(ALWAYS, v3)).toBe(v3);
    expect(and(v3, NEVER)).toEqual(NEVER);
    expect(or(v3, ALWAYS)).toEqual(ALWAYS);
    expect(or(NEVER, v3)).toBe(v3);
    expect(printCondition(and(or(test('a'), test('b')), test('c')))).toBe('(a || (b)) && c');
    expect(printCondition(or(versionCondition(range('1-2'), within), test('m.a !== 0')))).toBe('version >= 1 && version <= 2 || (m.a !== 0)');
    expect(not(ALWAYS)).toEqual(NEVER);
    expect(printCondition(not(v3))).toBe('version <= 2');
    expect(printCondition(not(versionCondition(range('0-2'), within)))).toBe('version >= 3');
    expect(printCondition(not(versionCondition(range('2-3'), within)))).toBe('!(version >= 2 && version <= 3)');
    expect(mentionsFlexible(and(test('x'), FLEXIBLE))).toBe(true);
    expect(mentionsFlexible(v3)).toBe(false);
  });

  it('build only the branch of a choice that can run', () => {
    const built: string[] = [];
    const branch = (name: string) => () => (built.push(name), name);
    expect(choose(ALWAYS, branch('x'), branch('y'))).toBe('x');
    expect(choose(NEVER, branch('x2'), branch('y2'))).toBe('y2');
    expect(built).toEqual(['x', 'y2']);
    expect(
      choose(
        FLEXIBLE,
        () => 'x',
        () => 'y',
      ),
    ).toBe('flexible ? x : y');
  });

  it('regular versions end where tagged versions begin', () => {
    const field = (versions: string, tagged: string) =>
      spec([{ name: 'A', type: 'int32', versions, ...(tagged === 'none' ? {} : { taggedVersions: tagged, tag: 0 }) }]).struct.fields[0]!;
    expect(regularVersions(field('0+', '3+')).toString()).toBe('0-2');
    expect(regularVersions(field('3+', '3+')).empty).toBe(true);
    expect(regularVersions(field('1+', 'none')).toString()).toBe('1+');
  });
});

describe('struct ranges', () => {
  it('are the versions of the fields leading to a struct, intersected down the tree and joined over its uses', () => {
    const s = spec(
      [
        {
          name: 'As',
          type: '[]A',
          versions: '1-2',
          fields: [{ name: 'Bs', type: '[]B', versions: '2+', fields: [{ name: 'X', type: 'int8', versions: '0+' }] }],
        },
        { name: 'C', type: 'Common', versions: '4+' },
        { name: 'Ds', type: '[]D', versions: '0+', fields: [{ name: 'C', type: 'Common', versions: '0-1' }] },
      ],
      { commonStructs: [{ name: 'Common', versions: '0+', fields: [{ name: 'Y', type: 'int8', versions: '0+' }] }] },
    );
    const ranges = structRanges(s);
    expect(ranges.get('A')?.toString()).toBe('1-2');
    expect(ranges.get('B')?.toString()).toBe('2');
    expect(ranges.get('D')?.toString()).toBe('0-5');
    // Common is reached in 4-5 (top level) and 0-1 (through D): the join spans both.
    expect(ranges.get('Common')?.toString()).toBe('0-5');
  });
});

describe('fixed runs', () => {
  const view = (fields: object[]) => structView(spec(fields), spec(fields).struct, range('0-5'), true, new RuntimeImports());

  it('join consecutive fixed-width fields present in every version into one bounds check', () => {
    const v = view([
      { name: 'A', type: 'int32', versions: '0+' },
      { name: 'B', type: 'int64', versions: '0+' },
      { name: 'C', type: 'uuid', versions: '0+' },
      { name: 'S', type: 'string', versions: '0+' },
      { name: 'D', type: 'int16', versions: '0+' },
      { name: 'E', type: 'bool', versions: '0+' },
    ]);
    expect(v.fixedRuns.map((r) => r.fields)).toEqual(["['a', 4], ['b', 8], ['c', 16]", "['d', 2], ['e', 1]"]);
    expect(v.readLines.filter((l) => l.includes('At('))).toEqual([
      'const a: number = r.int32At(aAt);',
      'const b: bigint = r.int64At(aAt + 4);',
      'const c: string = r.uuidAt(aAt + 12);',
      'const d: number = r.int16At(dAt);',
      'const e: boolean = r.boolAt(dAt + 2);',
    ]);
  });

  it('leave out a field that some version lacks, or a field that is tagged', () => {
    const v = view([
      { name: 'A', type: 'int32', versions: '0+' },
      { name: 'B', type: 'int32', versions: '1+' },
      { name: 'C', type: 'int32', versions: '0+' },
      { name: 'D', type: 'int32', versions: '3+', taggedVersions: '3+', tag: 0 },
      { name: 'E', type: 'int32', versions: '0+' },
    ]);
    expect(v.fixedRuns).toEqual([]);
  });

  it('sum the fixed sizes of a run into one addition', () => {
    const v = view([
      { name: 'A', type: 'int32', versions: '0+' },
      { name: 'B', type: 'int64', versions: '0+' },
      { name: 'S', type: 'string', versions: '0+' },
    ]);
    expect(v.sizeLines).toContain('size += 12; // a, b');
  });
});

describe('defaults', () => {
  const defaultOf = (type: string, value: unknown, more: object = {}) =>
    spec([{ name: 'A', type, versions: '0+', default: value, ...more }]).struct.fields[0]!.defaultValue;

  it('parse integers in decimal and 0x hex, within the range of the type', () => {
    expect(defaultOf('int8', '-128')).toEqual({ kind: 'number', value: -128 });
    expect(defaultOf('int16', '0x7fff')).toEqual({ kind: 'number', value: 32767 });
    expect(defaultOf('uint16', '0xffff')).toEqual({ kind: 'number', value: 65535 });
    expect(defaultOf('uint32', '4294967295')).toEqual({ kind: 'number', value: 4294967295 });
    expect(defaultOf('int64', '-9223372036854775808')).toEqual({ kind: 'bigint', value: -9223372036854775808n });
    expect(defaultOf('int32', 7)).toEqual({ kind: 'number', value: 7 });
  });

  it('give each type its zero when absent', () => {
    expect(defaultOf('int64', undefined)).toEqual({ kind: 'bigint', value: 0n });
    expect(defaultOf('bool', undefined)).toEqual({ kind: 'bool', value: false });
    expect(defaultOf('string', undefined)).toEqual({ kind: 'string', value: '' });
    expect(defaultOf('uuid', undefined)).toEqual({ kind: 'uuid', value: 'AAAAAAAAAAAAAAAAAAAAAA' });
    expect(defaultOf('[]int32', undefined)).toEqual({ kind: 'empty' });
    expect(defaultOf('records', undefined)).toEqual({ kind: 'null' });
  });

  it('read null only where every version of the field is nullable', () => {
    expect(defaultOf('string', 'null', { nullableVersions: '0+' })).toEqual({ kind: 'null' });
    expect(defaultOf('[]int8', 'null', { nullableVersions: '0+' })).toEqual({ kind: 'null' });
  });

  it("parse float64 as Java's Double.parseDouble does", () => {
    expect(parseJavaDouble('1.5')).toBe(1.5);
    expect(parseJavaDouble(' 2e3d ')).toBe(2000);
    expect(parseJavaDouble('.5f')).toBe(0.5);
    expect(parseJavaDouble('0x1.8p1')).toBe(3);
    expect(parseJavaDouble('-0X10P-4')).toBe(-1);
    expect(parseJavaDouble('-Infinity')).toBe(-Infinity);
    expect(parseJavaDouble('NaN')).toBeNaN();
    expect(parseJavaDouble('1,5')).toBeUndefined();
    expect(parseJavaDouble('0x1.8')).toBeUndefined();
    expect(parseJavaDouble('0xp1')).toBeUndefined();
  });
});

describe('generated write path', () => {
  it("refuses a non-default field in a version that lacks it, as Kafka's write does, without the size pass", async () => {
    const { InitProducerIdRequest } = await import('../../generated/index.js');
    const { UnsupportedVersionError, Writer } = await import('../../runtime/index.js');
    const m = InitProducerIdRequest.create({ transactionalId: 't', producerId: 5n });
    expect(() => InitProducerIdRequest.write(new Writer(64), m, 2)).toThrow(UnsupportedVersionError);
    expect(() => InitProducerIdRequest.write(new Writer(64), m, 2)).toThrow(/non-default producerId at version 2/);
    // At the default, the field is simply not on the wire of v2.
    const atDefault = InitProducerIdRequest.create({ transactionalId: 't' });
    const w = new Writer(InitProducerIdRequest.size(atDefault, 2));
    InitProducerIdRequest.write(w, atDefault, 2);
    expect(InitProducerIdRequest.decode(InitProducerIdRequest.encode(atDefault, 2), 2)).toEqual(atDefault);
  });
});

describe('generated ApiKey table', () => {
  it('names every API of the registry with its key, versions, header versions and listeners, as the codecs have them', async () => {
    const { ApiKey, apiKeyTable, apis } = await import('../../generated/index.js');
    expect(ApiKey.EndTxn).toBe(26);
    expect(ApiKey.ApiVersions).toBe(18);
    expect(apiKeyTable.map((a) => a.apiKey)).toEqual([...apis.keys()].sort((a, b) => a - b));
    for (const info of apiKeyTable) {
      const api = apis.get(info.apiKey)!;
      expect(ApiKey[info.name]).toBe(info.apiKey);
      expect(info.validVersions).toEqual(api.request.validVersions);
      expect(info.listeners).toEqual(api.listeners);
      for (const [headers, codec] of [
        [info.requestHeaders, api.request],
        [info.responseHeaders, api.response],
      ] as const) {
        expect(headers[0]!.lowest).toBe(info.validVersions.lowest);
        expect(headers[headers.length - 1]!.highest).toBe(info.validVersions.highest);
        for (const range of headers)
          for (let v = range.lowest; v <= range.highest; v++) expect(codec.headerVersion(v), `${info.name} v${v}`).toBe(range.header);
      }
    }
  });
});
