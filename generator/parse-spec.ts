import type { Diagnostic } from './diagnostics.js';
import { canBeNullable, parseFieldType, structNameOf, typeToString, type FieldType } from './field-type.js';
import { formatJsonPath, type JsonPath, type SchemaSource } from './source.js';
import type { DefaultValue, EntityType, FieldSpec, MessageSpec, SpecType, StructSpec } from './spec.js';
import { isUuidString } from '../runtime/uuid.js';
import { Versions } from './versions.js';

/**
 * The second validation layer: builds the MessageSpec model from a document
 * whose shape is already checked, enforcing what Apache Kafka's generator
 * enforces (FieldSpec, StructSpec, MessageSpec, StructRegistry and the default
 * checks of its code generators), with its messages where it has one, and
 * warning about legal but suspicious specs.
 */

type Raw = Record<string, unknown>;

const FIELD_NAME = /^[A-Za-z][A-Za-z0-9]*$/;
const MESSAGE_NAME = /^[A-Z][A-Za-z0-9_]*$/;

const ENTITY_BASE_TYPES: Record<EntityType, string | undefined> = {
  unknown: undefined,
  transactionalId: 'string',
  producerId: 'int64',
  groupId: 'string',
  topicName: 'string',
  brokerId: 'int32',
};

export interface ParseResult {
  spec: MessageSpec | undefined;
  diagnostics: Diagnostic[];
}

export function parseSpec(source: SchemaSource): ParseResult {
  const parser = new SpecParser(source);
  const spec = parser.parse();
  const failed = parser.diagnostics.some((d) => d.severity === 'error');
  return { spec: failed ? undefined : spec, diagnostics: parser.diagnostics };
}

class SpecParser {
  readonly diagnostics: Diagnostic[] = [];
  private readonly structs = new Map<string, StructSpec>();
  private readonly commonNames = new Set<string>();
  private flexibleVersions = Versions.NONE;
  private messageName = '';

  constructor(private readonly source: SchemaSource) {}

  parse(): MessageSpec | undefined {
    const raw = this.source.value as Raw;
    const name = String(raw.name);
    this.messageName = name;
    if (!MESSAGE_NAME.test(name)) {
      this.error(['name'], `message name "${name}" is not a valid type name (a capital letter, then letters, digits or _)`);
    }
    const type = raw.type as SpecType;
    const validVersions = this.versions(raw.validVersions, ['validVersions']) ?? Versions.NONE;
    const deprecatedVersions = raw.deprecatedVersions === undefined ? Versions.NONE : (this.versions(raw.deprecatedVersions, ['deprecatedVersions']) ?? Versions.NONE);
    const apiKey = raw.apiKey === undefined ? undefined : Number(raw.apiKey);
    const listeners = raw.listeners == null ? [] : Array.isArray(raw.listeners) ? (raw.listeners as string[]) : [String(raw.listeners)];
    const latestVersionUnstable = flag(raw.latestVersionUnstable);
    let headerVersions: MessageSpec['headerVersions'];

    if (validVersions.empty) {
      if (raw.headerVersions !== undefined) {
        this.error(['headerVersions'], `The \`headerVersions\` property must not be specified for message ${name}, which has no valid versions.`);
      }
    } else {
      if (validVersions.openEnded) this.error(['validVersions'], `Message ${name} does not specify a maximum version.`);
      if (raw.flexibleVersions === undefined) {
        this.error([], 'You must specify a value for flexibleVersions. Please use 0+ for all new messages.');
      } else {
        this.flexibleVersions = this.versions(raw.flexibleVersions, ['flexibleVersions']) ?? Versions.NONE;
        if (!this.flexibleVersions.empty && !this.flexibleVersions.openEnded) {
          this.error(
            ['flexibleVersions'],
            `Field ${name} specifies flexibleVersions ${this.flexibleVersions}, which is not open-ended.  flexibleVersions must be either none, or an open-ended range (that ends with a plus sign).`,
          );
        }
      }
      if (listeners.length > 0 && type !== 'request') {
        this.error(['listeners'], 'The `requestScope` property is only valid for messages with type `request`');
      }
      if (latestVersionUnstable && type !== 'request') {
        this.error(['latestVersionUnstable'], 'The `latestVersionUnstable` property is only valid for messages with type `request`');
      }
      if (raw.headerVersions !== undefined) headerVersions = this.headerVersions(raw.headerVersions as Raw, type, validVersions);
      if (type === 'coordinator-key') {
        if (apiKey === undefined) this.error([], `The ApiKey must be set for messages ${name} with type \`coordinator-key\``);
        if (!validVersions.equals(new Versions(0, 0))) {
          this.error(['validVersions'], `The Versions must be set to \`0\` for messages ${name} with type \`coordinator-key\``);
        }
        if (!this.flexibleVersions.empty) {
          this.error(['flexibleVersions'], `The FlexibleVersions are not supported for messages ${name}  with type \`coordinator-key\``);
        }
      }
      if (type === 'coordinator-value' && apiKey === undefined) {
        this.error([], 'The ApiKey must be set for messages with type `coordinator-value`');
      }
      if ((type === 'request' || type === 'response') && apiKey === undefined) {
        this.error([], `${type} ${name} has no apiKey`);
      }
      if (!deprecatedVersions.empty && !validVersions.covers(deprecatedVersions)) {
        this.warn(['deprecatedVersions'], `deprecatedVersions ${deprecatedVersions} reach outside validVersions ${validVersions}`);
      }
    }

    // Common structs are registered before any field, so that inline
    // declarations can be told apart from references (StructRegistry).
    const rawCommon = (raw.commonStructs as Raw[] | null | undefined) ?? [];
    rawCommon.forEach((struct, i) => {
      const structName = String(struct.name);
      if (!/^[A-Z]/.test(structName)) {
        this.error(['commonStructs', i, 'name'], `Can't process structure ${structName}: the first letter of structure names must be capitalized.`);
      }
      if (this.commonNames.has(structName)) this.error(['commonStructs', i], `Common struct ${structName} was specified twice.`);
      this.commonNames.add(structName);
    });
    const commonStructs = rawCommon.map((struct, i) => {
      const path: JsonPath = ['commonStructs', i];
      const versions = struct.versions === undefined ? undefined : this.versions(struct.versions, [...path, 'versions']);
      if (struct.versions === undefined) this.error(path, `You must specify the version of the ${String(struct.name)} structure.`);
      return { name: String(struct.name), versions: versions ?? Versions.NONE, raw: struct, path };
    });
    // Placeholders keep lookups working while the common structs' own fields are parsed.
    for (const common of commonStructs) {
      this.structs.set(common.name, { name: common.name, versions: common.versions, fields: [], isCommon: true, jsonPath: common.path });
    }
    for (const common of commonStructs) {
      const fields = this.fields((common.raw.fields as Raw[] | null | undefined) ?? [], [...common.path, 'fields'], common.name, common.versions);
      this.structs.set(common.name, { name: common.name, versions: common.versions, fields, isCommon: true, jsonPath: common.path });
    }

    const fields = this.fields((raw.fields as Raw[] | null | undefined) ?? [], ['fields'], name, validVersions);
    this.checkStructReferences();
    const struct: StructSpec = { name, versions: validVersions, fields, isCommon: false, jsonPath: [] };
    if (this.structs.has(name)) this.error(['name'], `struct ${name} has the same name as its message`);

    return {
      file: this.source.file,
      name,
      type,
      apiKey,
      validVersions,
      deprecatedVersions,
      flexibleVersions: this.flexibleVersions,
      latestVersionUnstable,
      listeners,
      headerVersions,
      struct,
      structs: this.structs,
    };
  }

  private fields(raws: Raw[], path: JsonPath, structName: string, structVersions: Versions): FieldSpec[] {
    const fields: FieldSpec[] = [];
    const tags = new Set<number>();
    const names = new Set<string>();
    raws.forEach((raw, i) => {
      const field = this.field(raw, [...path, i], structVersions);
      if (field === undefined) return;
      if (field.tag !== undefined) {
        if (tags.has(field.tag)) {
          this.error([...path, i, 'tag'], `In ${structName}, field ${field.name} has a duplicate tag ID ${field.tag}. All tags IDs must be unique.`);
        }
        tags.add(field.tag);
      }
      if (names.has(field.name)) {
        this.error([...path, i, 'name'], `In ${structName}, field ${field.name} has a duplicate name ${field.name}. All field names must be unique.`);
      }
      names.add(field.name);
      fields.push(field);
    });
    for (let t = 0; t < tags.size; t++) {
      if (!tags.has(t)) {
        this.error(path, `In ${structName}, the tag IDs are not contiguous.  Make use of tag ${t} before using any higher tag IDs.`);
        break;
      }
    }
    return fields;
  }

  private field(raw: Raw, path: JsonPath, parentVersions: Versions): FieldSpec | undefined {
    const name = String(raw.name);
    const errorsBefore = this.errorCount();
    if (!FIELD_NAME.test(name)) this.error([...path, 'name'], `Invalid field name ${name}`);

    const taggedVersions = raw.taggedVersions === undefined ? Versions.NONE : (this.versions(raw.taggedVersions, [...path, 'taggedVersions']) ?? Versions.NONE);
    let versions: Versions | undefined;
    if (raw.versions !== undefined) versions = this.versions(raw.versions, [...path, 'versions']);
    else if (!taggedVersions.empty) versions = taggedVersions;
    else this.error(path, `You must specify the version of the ${name} structure.`);

    let type: FieldType | undefined;
    try {
      type = parseFieldType(String(raw.type));
    } catch (e) {
      this.error([...path, 'type'], (e as Error).message);
    }
    const nullableVersions = raw.nullableVersions === undefined ? Versions.NONE : (this.versions(raw.nullableVersions, [...path, 'nullableVersions']) ?? Versions.NONE);
    const mapKey = flag(raw.mapKey);
    const ignorable = flag(raw.ignorable);
    const zeroCopy = flag(raw.zeroCopy);
    const entityType = (raw.entityType as EntityType | undefined) ?? 'unknown';
    const rawFields = (raw.fields as Raw[] | null | undefined) ?? [];
    const tag = raw.tag === undefined ? undefined : Number(raw.tag);
    let flexibleVersions: Versions | undefined;

    if (type !== undefined) {
      if (!nullableVersions.empty && !canBeNullable(type)) this.error([...path, 'nullableVersions'], `Type ${typeToString(type)} cannot be nullable.`);
      const base = ENTITY_BASE_TYPES[entityType];
      const baseType = type.kind === 'array' ? type.element.name : type.name;
      if (base !== undefined && baseType !== base) {
        this.error([...path, 'entityType'], `Field ${name} has entity type ${entityType}, but field type ${typeToString(type)}, which does not match.`);
      }
      if (rawFields.length > 0 && structNameOf(type) === undefined) {
        this.error([...path, 'fields'], `Non-array or Struct field ${name} cannot have fields`);
      }
      if (raw.flexibleVersions !== undefined && raw.flexibleVersions !== '') {
        flexibleVersions = this.versions(raw.flexibleVersions, [...path, 'flexibleVersions']);
        if (!(type.kind === 'primitive' && (type.name === 'string' || type.name === 'bytes'))) {
          this.error(
            [...path, 'flexibleVersions'],
            `Invalid flexibleVersions override for ${name}.  Only fields of type string or bytes can specify a flexibleVersions override.`,
          );
        }
      }
      if (zeroCopy && !(type.kind === 'primitive' && type.name === 'bytes')) {
        this.error([...path, 'zeroCopy'], `Invalid zeroCopy value for ${name}. Only fields of type bytes can use zeroCopy flag.`);
      }
    }
    if (tag !== undefined && mapKey) this.error([...path, 'mapKey'], 'Tagged fields cannot be used as keys.');
    if (versions !== undefined) this.checkTags(name, path, tag, taggedVersions, nullableVersions, versions);
    if (!taggedVersions.empty && !this.flexibleVersions.covers(taggedVersions)) {
      this.error(
        [...path, 'taggedVersions'],
        `Field ${name} specifies tagged versions ${taggedVersions} that are not a subset of the flexible versions ${this.flexibleVersions}`,
      );
    }

    if (versions !== undefined && type !== undefined) {
      this.registerStruct(name, type, rawFields, [...path, 'fields'], versions);
      this.suspicious(raw, path, name, versions, parentVersions);
    }
    if (versions === undefined || type === undefined || this.errorCount() > errorsBefore) return undefined;

    const defaultValue = this.defaultValue(raw.default, type, name, versions, nullableVersions, [...path, 'default']);
    if (defaultValue === undefined) return undefined;
    return {
      name,
      propertyName: name.charAt(0).toLowerCase() + name.slice(1),
      type,
      versions,
      nullableVersions,
      taggedVersions,
      tag,
      flexibleVersions,
      defaultValue,
      ignorable,
      mapKey,
      zeroCopy,
      entityType,
      about: typeof raw.about === 'string' ? raw.about : '',
      jsonPath: path,
    };
  }

  private checkTags(name: string, path: JsonPath, tag: number | undefined, tagged: Versions, nullable: Versions, versions: Versions): void {
    if (tag === undefined) {
      if (!tagged.empty) {
        this.error(
          [...path, 'taggedVersions'],
          `Field ${name} does not specify a tag, but specifies tagged versions of ${tagged}.  Please specify a tag, or remove the taggedVersions.`,
        );
      }
      return;
    }
    if (tag < 0) {
      this.error([...path, 'tag'], `Field ${name} specifies a tag of ${tag}.  Tags cannot be negative.`);
      return;
    }
    if (tagged.empty) {
      this.error(
        [...path, 'tag'],
        `Field ${name} specifies a tag of ${tag}, but has no tagged versions.  If a tag is specified, taggedVersions must be specified as well.`,
      );
      return;
    }
    const nullableTagged = nullable.intersect(tagged);
    if (!(nullableTagged.empty || nullableTagged.equals(tagged))) {
      this.error(
        [...path, 'nullableVersions'],
        `Field ${name} specifies nullableVersions ${nullable} and taggedVersions ${tagged}.  Either all tagged versions must be nullable, or none must be.`,
      );
    }
    if (!tagged.openEnded) {
      this.error(
        [...path, 'taggedVersions'],
        `Field ${name} specifies taggedVersions ${tagged}, which is not open-ended.  taggedVersions must be either none, or an open-ended range (that ends with a plus sign).`,
      );
    } else if (!tagged.intersect(versions).equals(tagged)) {
      this.error(
        [...path, 'taggedVersions'],
        `Field ${name} specifies taggedVersions ${tagged}, and versions ${versions}.  taggedVersions must be a subset of versions.`,
      );
    }
  }

  /** Registers the inline struct a field declares, as Kafka's StructRegistry does. */
  private registerStruct(fieldName: string, type: FieldType, rawFields: Raw[], path: JsonPath, versions: Versions): void {
    const structName = structNameOf(type);
    if (structName === undefined) return;
    if (this.commonNames.has(structName)) {
      if (rawFields.length > 0) this.error(path, `Can't re-specify the common struct ${structName} as an inline struct.`);
      return;
    }
    if (rawFields.length === 0 && type.kind === 'struct') return; // a reference; resolved in checkStructReferences
    if (this.structs.has(structName)) {
      this.error(path, `Struct ${structName} was specified twice.`);
      return;
    }
    if (!/^[A-Z][A-Za-z0-9_]*$/.test(structName)) {
      this.error(path, `struct name ${structName} (field ${fieldName}) is not a valid type name`);
      return;
    }
    // Registered before its fields are parsed so that a nested reuse of the name is a duplicate.
    const placeholder: StructSpec = { name: structName, versions, fields: [], isCommon: false, jsonPath: path };
    this.structs.set(structName, placeholder);
    const fields = this.fields(rawFields, path, structName, versions);
    this.structs.set(structName, { ...placeholder, fields });
  }

  private checkStructReferences(): void {
    const visit = (fields: readonly FieldSpec[]): void => {
      for (const field of fields) {
        const structName = structNameOf(field.type);
        if (structName !== undefined && !this.structs.has(structName)) {
          this.error(field.jsonPath, `Unable to locate a specification for the structure ${structName}`);
        }
      }
    };
    for (const struct of this.structs.values()) visit(struct.fields);
    // Top-level fields are not in the registry; they were parsed last.
    const raw = this.source.value as Raw;
    ((raw.fields as Raw[] | null | undefined) ?? []).forEach((f, i) => {
      try {
        const structName = structNameOf(parseFieldType(String(f.type)));
        if (structName !== undefined && !this.structs.has(structName)) {
          this.error(['fields', i, 'type'], `Unable to locate a specification for the structure ${structName}`);
        }
      } catch {
        // already reported
      }
    });
  }

  /** Legal, but probably not what the author meant. */
  private suspicious(raw: Raw, path: JsonPath, name: string, versions: Versions, parentVersions: Versions): void {
    for (const key of ['versions', 'nullableVersions', 'taggedVersions'] as const) {
      const text = raw[key];
      if (typeof text === 'string' && /^\s*(\d+)\s*-\s*(\d+)\s*$/.test(text)) {
        const [, a, b] = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(text)!;
        if (Number(a) > Number(b)) this.warn([...path, key], `${key} "${text}" is a reversed range, which Kafka reads as none`);
      }
    }
    if (!versions.empty && !parentVersions.empty && versions.intersect(parentVersions).empty) {
      this.warn([...path, 'versions'], `field ${name} has versions ${versions}, none of which its struct has (${parentVersions}): it never reaches the wire`);
    }
  }

  private defaultValue(
    raw: unknown,
    type: FieldType,
    name: string,
    versions: Versions,
    nullable: Versions,
    path: JsonPath,
  ): DefaultValue | undefined {
    // Jackson hands Kafka's generator the default as text; a JSON null means "no default".
    const text = raw === null || raw === undefined ? '' : String(raw);
    const nullDefault = (): DefaultValue | undefined => {
      if (!nullable.covers(versions)) {
        this.error(path, `null cannot be the default for field ${name}, because not all versions of this field are nullable.`);
        return undefined;
      }
      return { kind: 'null' };
    };
    if (type.kind === 'array') {
      if (text === 'null') return nullDefault();
      if (text !== '') {
        this.error(path, `Invalid default for array field ${name}.  The only valid default for an array field is the empty array or null.`);
        return undefined;
      }
      return { kind: 'empty' };
    }
    if (type.kind === 'struct') {
      if (text === 'null') return nullDefault();
      if (text !== '') {
        this.error(path, `Invalid default for struct field ${name}.  The only valid default for a struct field is the empty struct or null.`);
        return undefined;
      }
      return { kind: 'empty' };
    }
    switch (type.name) {
      case 'bool': {
        if (text === '' || text.toLowerCase() === 'false') return { kind: 'bool', value: false };
        if (text.toLowerCase() === 'true') return { kind: 'bool', value: true };
        this.error(path, `Invalid default for boolean field ${name}: ${text}`);
        return undefined;
      }
      case 'int8':
      case 'int16':
      case 'uint16':
      case 'int32':
      case 'uint32':
      case 'int64': {
        if (text === '') return type.name === 'int64' ? { kind: 'bigint', value: 0n } : { kind: 'number', value: 0 };
        const parsed = parseJavaInteger(text);
        const [min, max] = INTEGER_RANGES[type.name];
        if (parsed === undefined || parsed < min || parsed > max) {
          const why = parsed === undefined ? 'not an integer' : 'out of range';
          this.error(path, `Invalid default for ${type.name} field ${name}: ${text} (${why}; ${type.name} holds ${min} to ${max})`);
          return undefined;
        }
        return type.name === 'int64' ? { kind: 'bigint', value: parsed } : { kind: 'number', value: Number(parsed) };
      }
      case 'float64': {
        if (text === '') return { kind: 'number', value: 0 };
        const value = parseJavaDouble(text);
        if (value === undefined) {
          this.error(path, `Invalid default for float64 field ${name}: ${text}`);
          return undefined;
        }
        return { kind: 'number', value };
      }
      case 'string':
        if (text === 'null') return nullDefault();
        return { kind: 'string', value: text };
      case 'uuid':
        if (text === '') return { kind: 'uuid', value: 'AAAAAAAAAAAAAAAAAAAAAA' };
        if (!isUuidString(text)) {
          this.error(path, `Invalid default for uuid field ${name}: ${text} (expected 22 base64url characters)`);
          return undefined;
        }
        return { kind: 'uuid', value: text };
      case 'bytes':
        if (text === 'null') return nullDefault();
        if (text !== '') {
          this.error(path, `Invalid default for bytes field ${name}.  The only valid default for a bytes field is empty or null.`);
          return undefined;
        }
        return { kind: 'empty' };
      case 'records':
        // Kafka ignores any default for records: they start out null.
        return { kind: 'null' };
    }
  }

  private headerVersions(raw: Raw, type: SpecType, validVersions: Versions): MessageSpec['headerVersions'] {
    if (type !== 'request' && type !== 'response') {
      this.error(['headerVersions'], 'The `headerVersions` property is only valid for messages with type `request` or `response`');
      return undefined;
    }
    const entries: { versions: Versions; headerVersion: number }[] = [];
    for (const [range, header] of Object.entries(raw)) {
      const versions = this.versions(range, ['headerVersions', range]);
      const headerVersion = Number(header);
      if (versions === undefined) continue;
      if (!Number.isInteger(headerVersion) || headerVersion < 0 || headerVersion > 2) {
        this.error(['headerVersions', range], `header version ${String(header)} is not 0, 1 or 2`);
        continue;
      }
      if (!validVersions.covers(versions.intersect(new Versions(0, validVersions.highest)))) {
        this.error(['headerVersions', range], `header version range ${range} is outside validVersions ${validVersions}`);
      }
      entries.push({ versions, headerVersion });
    }
    return entries;
  }

  private versions(raw: unknown, path: JsonPath): Versions | undefined {
    try {
      const text = String(raw);
      const trimmed = text.trim();
      const reversed = /^(\d+)-(\d+)$/.exec(trimmed);
      // Kafka reads a reversed range such as "5-3" as empty; keep that meaning.
      if (reversed && Number(reversed[1]) > Number(reversed[2])) return Versions.NONE;
      return Versions.parse(text);
    } catch (e) {
      this.error(path, (e as Error).message);
      return undefined;
    }
  }

  private errorCount(): number {
    return this.diagnostics.filter((d) => d.severity === 'error').length;
  }

  private error(path: JsonPath, message: string): void {
    this.report('error', path, message);
  }

  private warn(path: JsonPath, message: string): void {
    this.report('warning', path, message);
  }

  private report(severity: Diagnostic['severity'], path: JsonPath, message: string): void {
    this.diagnostics.push({
      severity,
      file: this.source.file,
      ...this.source.locate(path),
      jsonPath: formatJsonPath(path),
      message: this.messageName && !message.includes(this.messageName) ? `${this.messageName}: ${message}` : message,
    });
  }
}

const INTEGER_RANGES = {
  int8: [-128n, 127n],
  int16: [-32768n, 32767n],
  uint16: [0n, 65535n],
  int32: [-2147483648n, 2147483647n],
  uint32: [0n, 4294967295n],
  int64: [-9223372036854775808n, 9223372036854775807n],
} as const;

/** Java's `valueOf(text, radix)` after Kafka's "0x" prefix check: an optional sign, then digits. */
function parseJavaInteger(text: string): bigint | undefined {
  const hex = text.startsWith('0x');
  const body = hex ? text.slice(2) : text;
  const match = (hex ? /^([+-]?)([0-9a-fA-F]+)$/ : /^([+-]?)([0-9]+)$/).exec(body);
  if (!match) return undefined;
  const magnitude = BigInt((hex ? '0x' : '') + match[2]);
  return match[1] === '-' ? -magnitude : magnitude;
}

/** Java's Double.parseDouble for the decimal forms a schema would use. */
function parseJavaDouble(text: string): number | undefined {
  const trimmed = text.trim().replace(/[dDfF]$/, '');
  if (/^[+-]?(NaN|Infinity)$/.test(trimmed)) return Number(trimmed.replace('+', ''));
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(trimmed)) return undefined;
  return Number(trimmed);
}

function flag(value: unknown): boolean {
  return value === true || value === 'true';
}
