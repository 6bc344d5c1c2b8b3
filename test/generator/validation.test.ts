import { describe, expect, it } from 'vitest';
import { parseSpec } from '../../generator/parse-spec.js';
import { checkShape } from '../../generator/shape.js';
import { SchemaSource } from '../../generator/source.js';
import { SchemaError, type Diagnostic } from '../../generator/diagnostics.js';

// Our own cases for each rule, each with the exact place the error points at.
function diagnose(text: string): Diagnostic[] {
  let source: SchemaSource;
  try {
    source = SchemaSource.parse('t.json', text);
  } catch (error) {
    if (error instanceof SchemaError) return error.diagnostics;
    throw error;
  }
  const shape = checkShape(source);
  return shape.length > 0 ? shape : parseSpec(source).diagnostics;
}

function spec(fields: string, top = '"type": "request", "apiKey": 90, "validVersions": "0-3", "flexibleVersions": "2+"'): string {
  return `// a test spec\n{\n  ${top},\n  "name": "TestRequest",\n  "fields": [\n${fields}\n  ]\n}\n`;
}

const cases: { rule: string; text: string; message: RegExp; line: number; path?: string; severity?: 'error' | 'warning' }[] = [
  { rule: 'JSON syntax', text: '{ "name": "X", }', message: /^invalid JSON: expected a key in double quotes, found }$/, line: 1 },
  {
    rule: 'JSON syntax: a missing comma',
    text: '{\n  "name": "X"\n  "type": "data"\n}',
    message: /^invalid JSON: expected a comma before the next entry, or the closing \} or \], found "type"$/,
    line: 3,
  },
  {
    rule: 'unknown key',
    text: spec('    { "name": "A", "type": "int32", "versions": "0+", "nullable": "0+" }'),
    message: /unknown key "nullable"/,
    line: 6,
    path: 'fields[0].nullable',
  },
  {
    rule: 'unknown type',
    text: spec('    { "name": "A", "type": "int99", "versions": "0+" }'),
    message: /Can't parse type int99/,
    line: 6,
    path: 'fields[0].type',
  },
  {
    rule: 'nullable int',
    text: spec('    { "name": "A", "type": "int32", "versions": "0+", "nullableVersions": "0+" }'),
    message: /cannot be nullable/,
    line: 6,
  },
  {
    rule: 'duplicate tag',
    text: spec(
      '    { "name": "A", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": 0 },\n    { "name": "B", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": 0 }',
    ),
    message: /duplicate tag ID 0/,
    line: 7,
  },
  {
    rule: 'tag outside flexible versions',
    text: spec('    { "name": "A", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 0 }'),
    message: /not a subset of the flexible versions 2\+/,
    line: 6,
  },
  {
    rule: 'tags contiguous',
    text: spec('    { "name": "A", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": 1 }'),
    message: /not contiguous/,
    line: 5,
  },
  {
    rule: 'duplicate field name',
    text: spec('    { "name": "A", "type": "int32", "versions": "0+" },\n    { "name": "A", "type": "int8", "versions": "0+" }'),
    message: /duplicate name A/,
    line: 7,
  },
  {
    rule: 'int8 default range',
    text: spec('    { "name": "A", "type": "int8", "versions": "0+", "default": "200" }'),
    message: /Invalid default for int8 field A: 200/,
    line: 6,
  },
  { rule: 'negative hex default', text: spec('    { "name": "A", "type": "int32", "versions": "0+", "default": "-0x1" }'), message: /not an integer/, line: 6 },
  {
    rule: 'bool default',
    text: spec('    { "name": "A", "type": "bool", "versions": "0+", "default": "yes" }'),
    message: /Invalid default for boolean field A/,
    line: 6,
  },
  {
    rule: 'uuid default',
    text: spec('    { "name": "A", "type": "uuid", "versions": "0+", "default": "nope" }'),
    message: /Invalid default for uuid field A/,
    line: 6,
  },
  {
    rule: 'array default',
    text: spec('    { "name": "A", "type": "[]int32", "versions": "0+", "default": "[1]" }'),
    message: /only valid default for an array field/,
    line: 6,
  },
  {
    rule: 'mapKey tagged',
    text: spec('    { "name": "A", "type": "int32", "versions": "2+", "taggedVersions": "2+", "tag": 0, "mapKey": true }'),
    message: /Tagged fields cannot be used as keys/,
    line: 6,
  },
  {
    rule: 'inline struct inside a common struct',
    text: spec(
      '    { "name": "A", "type": "Common", "versions": "0+" }',
      '"type": "request", "apiKey": 90, "validVersions": "0-3", "flexibleVersions": "2+", "commonStructs": [\n    { "name": "Common", "versions": "0+", "fields": [\n      { "name": "Bs", "type": "[]Missing", "versions": "0+", "fields": [] } ] } ]',
    ),
    message: /Unable to locate a specification for the structure Missing/,
    line: 5,
    path: 'commonStructs[0].fields[0]',
  },
  { rule: 'versions required', text: spec('    { "name": "A", "type": "int32" }'), message: /You must specify the version of the A structure/, line: 6 },
  {
    rule: 'open-ended validVersions',
    text: spec('', '"type": "request", "apiKey": 90, "validVersions": "0+", "flexibleVersions": "2+"'),
    message: /does not specify a maximum version/,
    line: 3,
  },
  { rule: 'request without apiKey', text: spec('', '"type": "request", "validVersions": "0-1", "flexibleVersions": "0+"'), message: /has no apiKey/, line: 2 },
  {
    rule: 'entity type mismatch',
    text: spec('    { "name": "A", "type": "int32", "versions": "0+", "entityType": "topicName" }'),
    message: /entity type topicName, but field type int32/,
    line: 6,
  },
  {
    rule: 'reversed field range',
    text: spec('    { "name": "A", "type": "int32", "versions": "3-1" }'),
    message: /^TestRequest: versions "3-1" is a reversed version range: its lowest version 3 is above its highest 1 \(did you mean "1-3"\?/,
    line: 6,
    path: 'fields[0].versions',
  },
  {
    rule: 'reversed validVersions',
    text: spec('    { "name": "A", "type": "int32", "versions": "0+" }', '"type": "request", "apiKey": 90, "validVersions": "3-1", "flexibleVersions": "2+"'),
    message: /validVersions "3-1" is a reversed version range/,
    line: 3,
    path: 'validVersions',
  },
  {
    rule: 'field outside valid versions warns',
    text: spec('    { "name": "A", "type": "int32", "versions": "5+" }'),
    message: /never reaches the wire/,
    line: 6,
    severity: 'warning',
  },
];

describe('a reversed version range', () => {
  it('is one error at its own position, with none of the knock-on errors of the ranges around it', () => {
    const text = spec(
      '    { "name": "A", "type": "int32", "versions": "0+" },\n    { "name": "Bs", "type": "[]Bee", "versions": "1+", "fields": [\n      { "name": "C", "type": "int8", "versions": "2-1" } ] }',
      '"type": "request", "apiKey": 90, "validVersions": "3-1", "flexibleVersions": "2+"',
    );
    expect(diagnose(text).map((d) => `${d.severity} ${d.line}:${d.column} ${d.jsonPath}`)).toEqual([
      'error 3:36 validVersions',
      'error 8:38 fields[1].fields[0].versions',
    ]);
  });
});

describe('schema validation: each rule names file:line and the JSON path', () => {
  for (const c of cases) {
    it(c.rule, () => {
      const diagnostics = diagnose(c.text).filter((d) => d.severity === (c.severity ?? 'error'));
      const hit = diagnostics.find((d) => c.message.test(d.message));
      expect(hit, JSON.stringify(diagnostics, null, 1)).toBeDefined();
      expect(hit!.file).toBe('t.json');
      expect(hit!.line).toBe(c.line);
      if (c.path) expect(hit!.jsonPath).toBe(c.path);
    });
  }

  it('a typo\'d key ("tpye") gives the unknown key, with a suggestion, and the missing one: no cascade on "fields"', () => {
    const diagnostics = diagnose(spec('    { "name": "A", "tpye": "int32", "versions": "0+" }'));
    expect(diagnostics.map((d) => [d.line, d.jsonPath, d.message]).sort()).toEqual([
      [6, 'fields[0]', 'missing required key "type"'],
      [6, 'fields[0].tpye', 'unknown key "tpye" (did you mean "type"?)'],
    ]);
  });

  it('accepts a valid spec with no diagnostics', () => {
    expect(diagnose(spec('    { "name": "A", "type": "uint32", "versions": "0+", "default": "4294967295" }'))).toEqual([]);
  });
});
