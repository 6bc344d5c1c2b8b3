import type { FieldSpec, MessageSpec, StructSpec } from '../spec.js';
import { Versions } from '../versions.js';
import { compactVersions, nullableVersions, regularVersions, taggedVersions } from '../wire-rules.js';
import { ALWAYS, and, choose, FLEXIBLE, isAlways, isDynamic, isNever, NEVER, not, or, test, versionCondition, type Condition } from './conditions.js';
import {
  defaultCondition,
  defaultExpression,
  initExpression,
  initTsType,
  fixedWidth,
  fromJsonExpression,
  holdsNull,
  lowerFirst,
  nonDefaultCondition,
  readExpression,
  sizeExpression,
  toJsonExpression,
  tsType,
  writeStatement,
  type RuntimeImports,
} from './field-code.js';
import { docText, localName, shorthand } from './names.js';

/**
 * The view of one struct that templates/message.hbs renders: its interface
 * and the bodies of its create, read, size, write and JSON functions, as
 * lines of TypeScript. The decisions live here; the layout in the template.
 */
export interface StructView {
  name: string;
  jsonName: string;
  about: string;
  /** Module-level descriptions of the runs of fixed-width fields the reader claims at once. */
  fixedRuns: { name: string; fields: string; comment: string }[];
  readFlexible: string | undefined;
  sizeFlexible: string | undefined;
  writeFlexible: string | undefined;
  hasTaggedSection: boolean;
  /** The body of `isDefault<name>`, when the module tests this struct against its default (see defaultTestBody). */
  defaultTest: string | undefined;
  properties: { name: string; type: string; doc: string; versions: string }[];
  /** create()'s input type's properties, and what create() stores in each field. */
  inits: { name: string; type: string; value: string }[];
  readLines: string[];
  returnFields: string[];
  sizeLines: string[];
  writeLines: string[];
  toJsonLines: string[];
  fromJsonLines: string[];
}

/** What the emitter knows about one field of a struct, as facts rather than code to inspect. */
interface FieldPlan {
  field: FieldSpec;
  local: string;
  v: string;
  /** The encoded width when the field is a single fixed-width primitive. */
  fixedWidth: number | undefined;
  /** Whether the value can be null (its type includes `| null`). */
  holdsNull: boolean;
  regular: Condition;
  tagged: Condition;
  /** `tagged` for code inside the tagged-field section, which runs only in flexible versions. */
  inTaggedSection: Condition;
  exists: Condition;
  /** Whether the field is compact where it is a regular field (tagged fields always are). */
  compact: Condition;
  /** Whether the field is nullable where it is a regular field. */
  nullable: Condition;
  /** Whether the field is nullable where it is a tagged field. */
  taggedNullable: Condition;
}

export function structView(message: MessageSpec, struct: StructSpec, within: Versions, isTop: boolean, rt: RuntimeImports): StructView {
  const flexibleCondition = versionCondition(message.flexibleVersions, within);
  // A dynamic test is made once per call, into the function's `flexible` local.
  const flexible = isDynamic(flexibleCondition) ? FLEXIBLE : flexibleCondition;
  const plans: FieldPlan[] = struct.fields.map((field) => {
    // The compact and nullable tests run only where the field is read or
    // written, so they are simplified against those versions, not the struct's.
    const regularIn = regularVersions(field).intersect(within);
    const taggedIn = taggedVersions(field).intersect(within);
    const compactTest = versionCondition(compactVersions(message, field), regularIn);
    // Within the struct's versions, `flexible` says the same as a test on the message's flexible versions.
    const compact = field.flexibleVersions === undefined && isDynamic(compactTest) ? flexible : compactTest;
    return {
      field,
      local: localName(field.propertyName),
      v: `m.${field.propertyName}`,
      fixedWidth: fixedWidth(field),
      holdsNull: holdsNull(field),
      regular: versionCondition(regularIn, within),
      tagged: versionCondition(taggedIn, within),
      // Tagged fields exist only in flexible versions, so inside the
      // `if (flexible)` section the test is simplified against those.
      inTaggedSection: versionCondition(taggedIn, within.intersect(message.flexibleVersions)),
      exists: versionCondition(field.versions, within),
      compact,
      nullable: versionCondition(nullableVersions(field), regularIn),
      taggedNullable: versionCondition(nullableVersions(field), taggedIn),
    };
  });
  const taggedPlans = plans.filter((p) => !isNever(p.tagged)).sort((a, b) => a.field.tag! - b.field.tag!);
  const hasTaggedSection = !isNever(flexible);

  // Each body declares `flexible` only when its code reads it.
  const declaration = `const flexible = ${rt.cond(flexibleCondition)};`;
  const fixedRuns: StructView['fixedRuns'] = [];
  const read = rt.body(() => readLines(plans, taggedPlans, flexible, hasTaggedSection, rt, struct.name, fixedRuns));
  const size = rt.body(() => sizeLines(plans, taggedPlans, flexible, hasTaggedSection, rt));
  const write = rt.body(() => writeLines(plans, taggedPlans, flexible, hasTaggedSection, rt));
  return {
    name: struct.name,
    jsonName: lowerFirst(struct.name),
    about: isTop ? '' : `Fields of ${struct.name}.`,
    fixedRuns,
    readFlexible: read.readsFlexible ? declaration : undefined,
    sizeFlexible: size.readsFlexible ? declaration : undefined,
    writeFlexible: write.readsFlexible ? declaration : undefined,
    hasTaggedSection,
    defaultTest: undefined,
    properties: plans.map((p) => ({
      name: p.field.propertyName,
      type: tsType(p.field),
      doc: docText(p.field.about),
      versions: describeVersions(p.field),
    })),
    inits: plans.map((p) => ({ name: p.field.propertyName, type: initTsType(p.field), value: initExpression(p.field, `fields.${p.field.propertyName}`, rt) })),
    readLines: read.result,
    returnFields: plans.map((p) => shorthand(p.field.propertyName, p.local)),
    sizeLines: size.result,
    writeLines: write.result,
    toJsonLines: toJsonLines(plans, rt),
    fromJsonLines: fromJsonLines(plans, rt),
  };
}

/**
 * Whether a struct value equals the struct's default, as Kafka's non-default
 * check of a struct field asks: every field at its default and no unknown
 * tagged field kept. Field by field, with no default object built to compare with.
 */
export function defaultTestBody(struct: StructSpec, hasTaggedSection: boolean, rt: RuntimeImports): string {
  const tests = struct.fields.map((field) => defaultCondition(field, `m.${field.propertyName}`, rt));
  if (hasTaggedSection) tests.push('m._unknownTaggedFields === undefined');
  return tests.length === 0 ? 'true' : tests.join(' && ');
}

function describeVersions(field: FieldSpec): string {
  const parts = [`versions ${field.versions}`];
  if (!field.nullableVersions.empty) parts.push(`nullable ${field.nullableVersions}`);
  if (!field.taggedVersions.empty) parts.push(`tagged ${field.taggedVersions} (tag ${field.tag})`);
  if (field.ignorable) parts.push('ignorable');
  return parts.join('; ');
}

/** Fields read with one bounds check for the whole run: always present, never tagged, fixed width. */
function inRun(p: FieldPlan): boolean {
  return isAlways(p.regular) && isNever(p.tagged) && p.fixedWidth !== undefined;
}

function readLines(
  plans: FieldPlan[],
  tagged: FieldPlan[],
  flexible: Condition,
  hasTagged: boolean,
  rt: RuntimeImports,
  structName: string,
  runs: StructView['fixedRuns'],
): string[] {
  const lines: string[] = [];
  for (let i = 0; i < plans.length; i++) {
    const p = plans[i]!;
    let end = i;
    while (end < plans.length && inRun(plans[end]!)) end++;
    if (end - i >= 2) {
      const run = plans.slice(i, end);
      const name = `${upperSnake(structName)}_RUN_${runs.length}`;
      // The run's position is named after its first field: `producerIdAt`.
      const start = freeName(`${run[0]!.local}At`, plans);
      runs.push({
        name,
        fields: run.map((f) => `['${f.field.propertyName}', ${f.fixedWidth}]`).join(', '),
        comment: run.map((f) => f.field.propertyName).join(', '),
      });
      rt.use('fixedRun');
      // The run's error names its own field, so the struct adds no segment of its own.
      if (lines.length > 0) lines.push(`at = '';`);
      lines.push(`const ${start} = r.claim(${name});`);
      let offset = 0;
      for (const f of run) {
        const type = f.field.type.kind === 'primitive' ? f.field.type.name : '';
        lines.push(`const ${f.local}: ${tsType(f.field)} = r.${type}At(${offset === 0 ? start : `${start} + ${offset}`});`);
        offset += f.fixedWidth!;
      }
      i = end - 1;
      continue;
    }
    const dflt = defaultExpression(p.field, rt);
    const declare = isNever(p.tagged) ? 'const' : 'let';
    if (isNever(p.regular)) {
      lines.push(`${declare} ${p.local}: ${tsType(p.field)} = ${dflt};`);
      continue;
    }
    lines.push(`at = '${p.field.propertyName}';`);
    const read = choose(
      p.regular,
      () => readExpression(p.field, p.compact, p.nullable, rt),
      () => dflt,
    );
    lines.push(`${declare} ${p.local}: ${tsType(p.field)} = ${read};`);
  }
  if (!hasTagged) return lines;
  lines.push('let _unknownTaggedFields: RawTaggedField[] | undefined;');
  if (tagged.length === 0) {
    lines.push(...when(flexible, [`at = '(tagged fields)';`, '_unknownTaggedFields = r.unknownTaggedFields();'], rt));
    return lines;
  }
  const section = [
    `at = '(tagged fields)';`,
    'const count = r.unsignedVarint();',
    'for (let i = 0; i < count; i++) {',
    'const tag = r.unsignedVarint();',
    'const size = r.taggedFieldSize();',
    'const start = r.pos;',
  ];
  tagged.forEach((p, i) => {
    const isThisTag = and(test(`tag === ${p.field.tag}`), p.inTaggedSection);
    section.push(`${i === 0 ? '' : '} else '}if (${rt.cond(isThisTag)}) {`);
    section.push(`at = '${p.field.propertyName}';`);
    section.push(`${p.local} = ${readExpression(p.field, ALWAYS, p.taggedNullable, rt)};`);
  });
  section.push('} else {', '_unknownTaggedFields = r.unknownTaggedField(_unknownTaggedFields, tag, size);', '}');
  section.push('r.endTaggedField(tag, start, size);', '}');
  lines.push(...when(flexible, section, rt));
  return lines;
}

/** `lines` run only when `cond` holds; with no test at all when it always does. */
function when(cond: Condition, lines: string[], rt: RuntimeImports): string[] {
  return isAlways(cond) ? lines : [`if (${rt.cond(cond)}) {`, ...lines, '}'];
}

/**
 * Kafka's non-ignorable field check, in both size and write (as Kafka's write
 * has it): a version without the field cannot carry a value other than its
 * default, so that the write path alone cannot drop it silently.
 */
function absentCheck(p: FieldPlan, rt: RuntimeImports): string[] {
  const missing = not(p.exists);
  if (p.field.ignorable || isNever(missing)) return [];
  return [
    `if (${rt.cond(and(missing, test(nonDefaultCondition(p.field, p.v, rt))))}) {`,
    `throw new ${rt.use('UnsupportedVersionError')}(\`Attempted to write a non-default ${p.field.propertyName} at version \${version}\`);`,
    '}',
  ];
}

function sizeLines(plans: FieldPlan[], tagged: FieldPlan[], flexible: Condition, hasTagged: boolean, rt: RuntimeImports): string[] {
  const lines: string[] = ['let size = 0;'];
  // Consecutive fixed-width fields are added as one sum, named in a comment.
  let fixed: { bytes: number; names: string[] } | undefined;
  const flushFixed = (): void => {
    if (fixed === undefined) return;
    lines.push(`size += ${fixed.bytes}; // ${fixed.names.join(', ')}`);
    fixed = undefined;
  };
  for (const p of plans) {
    if (isAlways(p.regular) && p.fixedWidth !== undefined) {
      fixed ??= { bytes: 0, names: [] };
      fixed.bytes += p.fixedWidth;
      fixed.names.push(p.field.propertyName);
    } else if (!isNever(p.regular)) {
      flushFixed();
      lines.push(...when(p.regular, [`size += ${sizeExpression(p.field, p.v, p.compact, p.nullable, rt)};`], rt));
    }
    const absent = absentCheck(p, rt);
    if (absent.length > 0) {
      flushFixed();
      lines.push(...absent);
    }
  }
  flushFixed();
  const done = (): string[] => [...lines, 'return size;'];
  if (!hasTagged) return done();
  if (tagged.length === 0) {
    lines.push(...when(flexible, [`size += ${rt.use('sizeOfUnknownTaggedFields')}(m._unknownTaggedFields);`], rt));
    return done();
  }
  const section = [
    'const unknown = m._unknownTaggedFields;',
    'let count = unknown === undefined ? 0 : unknown.length;',
    `size += ${rt.use('sizeOfRawTaggedFields')}(unknown);`,
  ];
  for (const p of tagged) {
    section.push(`if (${rt.cond(and(p.inTaggedSection, test(nonDefaultCondition(p.field, p.v, rt))))}) {`);
    section.push(`const fieldSize = ${sizeExpression(p.field, p.v, ALWAYS, p.taggedNullable, rt)};`);
    section.push(`size += ${rt.use('sizeOfUnsignedVarint')}(${p.field.tag}) + ${rt.use('sizeOfUnsignedVarint')}(fieldSize) + fieldSize;`);
    section.push('count++;', '}');
  }
  section.push(`size += ${rt.use('sizeOfUnsignedVarint')}(count);`);
  lines.push(...when(flexible, section, rt));
  return done();
}

function writeLines(plans: FieldPlan[], tagged: FieldPlan[], flexible: Condition, hasTagged: boolean, rt: RuntimeImports): string[] {
  const lines: string[] = [];
  for (const p of plans) {
    if (!isNever(p.regular)) lines.push(...when(p.regular, [writeStatement(p.field, p.v, p.compact, p.nullable, rt)], rt));
    lines.push(...absentCheck(p, rt));
  }
  if (!hasTagged) return lines;
  if (tagged.length === 0) {
    lines.push(...when(flexible, [`${rt.use('writeUnknownTaggedFields')}(w, m._unknownTaggedFields);`], rt));
    return lines;
  }
  const section = ['const unknown = m._unknownTaggedFields;', 'let count = unknown === undefined ? 0 : unknown.length;'];
  // Whether each known tagged field is written: decided once, used for the count and the write.
  const has = tagged.map((p) => freeName(`has${p.local.charAt(0).toUpperCase()}${p.local.slice(1)}`, plans));
  tagged.forEach((p, i) => {
    section.push(`const ${has[i]} = ${rt.cond(and(p.inTaggedSection, test(nonDefaultCondition(p.field, p.v, rt))))};`, `if (${has[i]}) count++;`);
  });
  section.push('w.unsignedVarint(count);', 'let next = 0;');
  tagged.forEach((p, i) => {
    section.push(`if (${has[i]}) {`);
    section.push(`next = ${rt.use('writeRawTaggedFields')}(w, unknown, next, ${p.field.tag});`);
    section.push(`w.unsignedVarint(${p.field.tag});`);
    section.push(`w.unsignedVarint(${sizeExpression(p.field, p.v, ALWAYS, p.taggedNullable, rt)});`);
    section.push(writeStatement(p.field, p.v, ALWAYS, p.taggedNullable, rt));
    section.push('}');
  });
  section.push(`${rt.use('writeRawTaggedFields')}(w, unknown, next, Infinity);`);
  lines.push(...when(flexible, section, rt));
  return lines;
}

function toJsonLines(plans: FieldPlan[], rt: RuntimeImports): string[] {
  const lines: string[] = [];
  for (const p of plans) {
    const assign = `json.${p.field.propertyName} = ${toJsonExpression(p.field, p.v, rt)};`;
    // Tagged fields appear only when they differ from their default, like the binary form.
    const whenTagged = isNever(p.tagged) ? NEVER : and(p.tagged, test(nonDefaultCondition(p.field, p.v, rt)));
    const written = or(p.regular, whenTagged);
    if (isAlways(written)) lines.push(assign);
    else if (!isNever(written)) lines.push(`if (${rt.cond(written)}) {`, assign, '}');
  }
  return lines;
}

function fromJsonLines(plans: FieldPlan[], rt: RuntimeImports): string[] {
  const lines: string[] = [];
  for (const p of plans) {
    const key = p.field.propertyName;
    const j = `o.${key}`;
    const path = `${rt.use('jsonChild')}(path, '${key}')`;
    lines.push(`if (${j} !== undefined) {`, `m.${key} = ${fromJsonExpression(p.field, j, path, rt)};`);
    if (isAlways(p.regular)) lines.push('} else {', `throw ${rt.use('missingField')}(path, '${key}', version);`);
    else if (!isNever(p.regular)) lines.push(`} else if (${rt.cond(p.regular)}) {`, `throw ${rt.use('missingField')}(path, '${key}', version);`);
    lines.push('}');
  }
  return lines;
}

/** A local named `wanted`, unless a field's local already has that name. */
function freeName(wanted: string, plans: FieldPlan[]): string {
  let name = wanted;
  while (plans.some((p) => p.local === name)) name = `${name}_`;
  return name;
}

function upperSnake(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}
