import type { Diagnostic } from './diagnostics.js';
import { canBeNullable, parseFieldType, structNameOf, typeToString, type FieldType } from './field-type.js';
import { formatJsonPath, type JsonPath, type SchemaSource } from './source.js';
import type { DefaultValue, EntityType, FieldSpec, MessageSpec, SpecType, StructSpec } from './spec.js';
import { isUuidString } from '../runtime/uuid.js';
import { Versions } from './versions.js';
import { API_VERSIONS_KEY } from './wire-rules.js';

/**
 * The second validation layer: builds the MessageSpec model from a document
 * whose shape is already checked, enforcing what Apache Kafka's generator
 * enforces (FieldSpec, StructSpec, MessageSpec, StructRegistry and the default
 * checks of its code generators), with its messages where it has one, and
 * warning about legal but suspicious specs.
 */

type Raw = Record<string, unknown>;

/** Where a list of fields sits: the struct that holds them, and which versions can reach it. */
interface StructContext {
  readonly name: string;
  /**
   * The versions in which this struct can be on the wire: the message's valid
   * versions narrowed by every enclosing field (for a common struct, its own
   * versions). Kafka's generators guard each inline struct's code with this range.
   */
  readonly reachable: Versions;
  /**
   * The struct's own versions. A field outside them is worth a warning; one outside
   * `reachable` only is not (Kafka's specs keep fields of versions since removed).
   */
  readonly declared: Versions;
  /** Inside a commonStructs entry, whose inline structs Kafka's StructRegistry never registers. */
  readonly inCommon: boolean;
}

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

/** The keys whose values are version ranges, in a message and in a field. */
const RANGE_KEYS = ['validVersions', 'flexibleVersions', 'deprecatedVersions', 'versions', 'nullableVersions', 'taggedVersions'] as const;

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
    // A reversed range ("3-1") is a typo whose knock-on errors (other ranges
    // that no longer overlap it, structs in no version) would bury it: name
    // each one and stop, as the shape check does for an unknown key.
    if (this.reportReversedRanges(raw, [])) return undefined;
    if (!MESSAGE_NAME.test(name)) {
      this.error(['name'], `message name "${name}" is not a valid type name (a capital letter, then letters, digits or _)`);
    }
    const type = raw.type as SpecType;
    const validVersions = this.versions(raw.validVersions, ['validVersions']) ?? Versions.NONE;
    const deprecatedVersions =
      raw.deprecatedVersions === undefined ? Versions.NONE : (this.versions(raw.deprecatedVersions, ['deprecatedVersions'], Versions.NONE) ?? Versions.NONE);
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
        this.flexibleVersions = this.versions(raw.flexibleVersions, ['flexibleVersions'], Versions.NONE) ?? Versions.NONE;
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
      if (raw.headerVersions !== undefined) headerVersions = this.headerVersions(raw.headerVersions as Raw, name, type, apiKey, validVersions);
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
      const given = struct.versions !== undefined && String(struct.versions).trim() !== '';
      const versions = given ? this.versions(struct.versions, [...path, 'versions']) : undefined;
      if (!given) this.error(path, `You must specify the version of the ${String(struct.name)} structure.`);
      // MessageDataGenerator writes a class for every common struct, guarded by its own versions;
      // with none, Kafka's VersionConditional refuses the always-false check.
      else if (versions !== undefined && versions.empty) {
        this.error(
          [...path, 'versions'],
          `Version ranges ${versions} and ${versions} have no versions in common: common struct ${String(struct.name)} has no versions.`,
        );
      }
      return { name: String(struct.name), versions: versions ?? Versions.NONE, raw: struct, path };
    });
    // Placeholders keep lookups working while the common structs' own fields are parsed.
    for (const common of commonStructs) {
      this.structs.set(common.name, { name: common.name, versions: common.versions, fields: [], isCommon: true, jsonPath: common.path });
    }
    for (const common of commonStructs) {
      const context = { name: common.name, reachable: common.versions, declared: common.versions, inCommon: true };
      const fields = this.fields((common.raw.fields as Raw[] | null | undefined) ?? [], [...common.path, 'fields'], context);
      this.structs.set(common.name, { name: common.name, versions: common.versions, fields, isCommon: true, jsonPath: common.path });
    }

    const fields = this.fields((raw.fields as Raw[] | null | undefined) ?? [], ['fields'], {
      name,
      reachable: validVersions,
      declared: validVersions,
      inCommon: false,
    });
    // MessageDataGenerator: the top-level class is no element of a keyed set.
    ((raw.fields as Raw[] | null | undefined) ?? []).forEach((f, i) => {
      if (flag(f.mapKey)) this.error(['fields', i, 'mapKey'], 'Cannot set mapKey on top level fields.');
    });
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

  private fields(raws: Raw[], path: JsonPath, context: StructContext): FieldSpec[] {
    const structName = context.name;
    const fields: FieldSpec[] = [];
    const tags = new Set<number>();
    const names = new Set<string>();
    const properties = new Map<string, string>();
    raws.forEach((raw, i) => {
      const field = this.field(raw, [...path, i], context);
      if (field === undefined) return;
      // Beyond Kafka: "Foo" and "foo" are distinct names, but one property (and one Java field) foo.
      const clash = properties.get(field.propertyName);
      if (clash !== undefined && clash !== field.name) {
        this.error([...path, i, 'name'], `In ${structName}, fields ${clash} and ${field.name} both become the property ${field.propertyName}; rename one.`);
      }
      properties.set(field.propertyName, field.name);
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

  private field(raw: Raw, path: JsonPath, context: StructContext): FieldSpec | undefined {
    const parentVersions = context.declared;
    const name = String(raw.name);
    const errorsBefore = this.errorCount();
    if (!FIELD_NAME.test(name)) this.error([...path, 'name'], `Invalid field name ${name}`);

    const taggedVersions =
      raw.taggedVersions === undefined ? Versions.NONE : (this.versions(raw.taggedVersions, [...path, 'taggedVersions'], Versions.NONE) ?? Versions.NONE);
    // Without versions, a field takes its tagged versions (FieldSpec); a blank string counts as absent.
    const fallback = taggedVersions.empty ? undefined : taggedVersions;
    const versionsGiven = raw.versions !== undefined && String(raw.versions).trim() !== '';
    let versions: Versions | undefined;
    if (versionsGiven) versions = this.versions(raw.versions, [...path, 'versions']);
    else if (fallback !== undefined) versions = fallback;
    else this.error(path, `You must specify the version of the ${name} structure.`);

    let type: FieldType | undefined;
    try {
      type = parseFieldType(String(raw.type));
    } catch (e) {
      this.error([...path, 'type'], (e as Error).message);
    }
    const nullableVersions =
      raw.nullableVersions === undefined ? Versions.NONE : (this.versions(raw.nullableVersions, [...path, 'nullableVersions'], Versions.NONE) ?? Versions.NONE);
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
    // MessageDataGenerator.fieldFlexibleVersions: an override may only narrow the message's flexible versions.
    if (flexibleVersions !== undefined && !this.flexibleVersions.covers(flexibleVersions)) {
      this.error(
        [...path, 'flexibleVersions'],
        `The flexible versions for field ${name} are ${flexibleVersions}, which are not a subset of the flexible versions for the message as a whole, which are ${this.flexibleVersions}`,
      );
    }
    const fieldFlexible = flexibleVersions ?? this.flexibleVersions;
    if (!taggedVersions.empty && !fieldFlexible.covers(taggedVersions)) {
      this.error(
        [...path, 'taggedVersions'],
        `Field ${name} specifies tagged versions ${taggedVersions} that are not a subset of the flexible versions ${fieldFlexible}`,
      );
    }
    if (
      type !== undefined &&
      type.kind === 'primitive' &&
      type.name === 'records' &&
      versions !== undefined &&
      !taggedVersions.intersect(versions).intersect(context.reachable).empty
    ) {
      this.error([...path, 'tag'], `Unsupported attempt to declare field \`${name}\` with \`records\` type as a tagged field.`);
    }

    if (versions !== undefined && type !== undefined) {
      this.registerStruct(name, type, rawFields, path, versions, context);
      this.suspicious(raw, path, name, versions, parentVersions, type);
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
  private registerStruct(fieldName: string, type: FieldType, rawFields: Raw[], fieldPath: JsonPath, versions: Versions, context: StructContext): void {
    const structName = structNameOf(type);
    if (structName === undefined) return;
    const path = [...fieldPath, 'fields'];
    if (this.commonNames.has(structName)) {
      if (rawFields.length > 0) this.error(path, `Can't re-specify the common struct ${structName} as an inline struct.`);
      return;
    }
    // StructRegistry registers inline structs of the message's own fields only, so the
    // generators cannot find one declared inside a common struct.
    if (context.inCommon) {
      this.error(
        fieldPath,
        `Unable to locate a specification for the structure ${structName} (an inline struct inside common struct ${context.name}; declare ${structName} in commonStructs instead)`,
      );
      return;
    }
    if (this.structs.has(structName)) {
      this.error(path, `Struct ${structName} was specified twice.`);
      return;
    }
    // Kafka's VersionConditional refuses a struct whose code no version can reach.
    const reachable = context.reachable.intersect(versions);
    if (reachable.empty) {
      this.error(
        [...fieldPath, 'versions'],
        `Version ranges ${context.reachable} and ${versions} have no versions in common: struct ${structName} (field ${fieldName}) exists in no version of ${context.name}.`,
      );
    }
    if (!/^[A-Z][A-Za-z0-9_]*$/.test(structName)) {
      this.error(path, `struct name ${structName} (field ${fieldName}) is not a valid type name`);
      return;
    }
    // Registered before its fields are parsed so that a nested reuse of the name is a duplicate.
    const placeholder: StructSpec = { name: structName, versions, fields: [], isCommon: false, jsonPath: path };
    this.structs.set(structName, placeholder);
    // After an unreachable struct (reported above), its own range keeps nested structs from repeating the error.
    const fields = this.fields(rawFields, path, { name: structName, reachable: reachable.empty ? versions : reachable, declared: versions, inCommon: false });
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
  private suspicious(raw: Raw, path: JsonPath, name: string, versions: Versions, parentVersions: Versions, type: FieldType): void {
    // An unreachable inline struct is an error (registerStruct), not a warning.
    const structName = structNameOf(type);
    const declaresInlineStruct = structName !== undefined && !this.commonNames.has(structName);
    if (!versions.empty && !parentVersions.empty && versions.intersect(parentVersions).empty && !declaresInlineStruct) {
      this.warn([...path, 'versions'], `field ${name} has versions ${versions}, none of which its struct has (${parentVersions}): it never reaches the wire`);
    }
  }

  private defaultValue(raw: unknown, type: FieldType, name: string, versions: Versions, nullable: Versions, path: JsonPath): DefaultValue | undefined {
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
        // Beyond Kafka: a default longer than a string can be on the wire makes create() unencodable.
        if (Buffer.byteLength(text, 'utf8') > 0x7fff) {
          this.error(path, `Invalid default for string field ${name}: ${Buffer.byteLength(text, 'utf8')} bytes, more than a string field holds (32767)`);
          return undefined;
        }
        return { kind: 'string', value: text };
      case 'uuid': {
        if (text === '') return { kind: 'uuid', value: 'AAAAAAAAAAAAAAAAAAAAAA' };
        // Kafka's Uuid.fromString takes the padded form too; kipgen keeps the canonical 22 characters.
        // Beyond Kafka: more than 16 bytes passes Kafka's generator but fails Uuid.fromString at run time.
        const unpadded = text.length === 24 && text.endsWith('==') ? text.slice(0, 22) : text;
        if (!isUuidString(unpadded)) {
          this.error(path, `Invalid default for uuid field ${name}: ${text} (expected 16 bytes as 22 base64url characters)`);
          return undefined;
        }
        return { kind: 'uuid', value: unpadded };
      }
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

  /**
   * The spec's own map from API versions to header versions, checked as Kafka's
   * HeaderVersions does: ranges from 0, contiguous, the last open-ended, none
   * starting above the highest valid version. Beyond Kafka: a header version
   * kipgen's runtime has no header for is refused here rather than at run time.
   */
  private headerVersions(raw: Raw, name: string, type: SpecType, apiKey: number | undefined, validVersions: Versions): MessageSpec['headerVersions'] {
    if (type !== 'request' && type !== 'response') {
      this.error(['headerVersions'], 'The `headerVersions` property is only valid for messages with type `request` or `response`');
      return undefined;
    }
    const keys = Object.keys(raw);
    if (keys.length === 0) {
      this.error(['headerVersions'], `Message ${name} specifies an empty headerVersions map.`);
      return undefined;
    }
    const entries: { versions: Versions; headerVersion: number; key: string }[] = [];
    for (const key of keys) {
      const at: JsonPath = ['headerVersions', key];
      if (key.trim() === '') {
        this.error(at, `Message ${name} specifies a blank version range in headerVersions.`);
        continue;
      }
      let versions: Versions | undefined;
      try {
        versions = Versions.parse(key);
      } catch {
        versions = undefined;
      }
      if (versions === undefined || versions.empty) {
        this.error(at, `Message ${name} specifies an invalid version range "${key}" in headerVersions.`);
        continue;
      }
      const text = String(raw[key]).trim();
      if (text === '') {
        this.error(at, `Message ${name} specifies a blank header version for range "${key}" in headerVersions.`);
        continue;
      }
      const headerVersion = /^[+-]?\d+$/.test(text) ? Number(text) : Number.NaN;
      if (!Number.isInteger(headerVersion) || headerVersion > 32767 || headerVersion < -32768) {
        this.error(at, `Message ${name} specifies an invalid header version "${String(raw[key])}" for range "${key}" in headerVersions.`);
        continue;
      }
      if (headerVersion < 0) {
        this.error(at, `Message ${name} specifies a negative header version "${String(raw[key])}" for range "${key}" in headerVersions.`);
        continue;
      }
      const highestHeader = type === 'request' ? 2 : 1;
      if (headerVersion > highestHeader) {
        this.error(
          at,
          `Message ${name} maps versions ${versions} to ${type} header version ${headerVersion}, but ${type} headers go up to version ${highestHeader}.`,
        );
        continue;
      }
      if (type === 'response' && apiKey === API_VERSIONS_KEY && headerVersion !== 0) {
        this.error(
          at,
          `Message ${name} maps versions ${versions} to response header version ${headerVersion}, but ApiVersionsResponse must use a v0 response header at every version so that older brokers can parse it (KIP-511).`,
        );
        continue;
      }
      entries.push({ versions, headerVersion, key });
    }
    if (entries.length < keys.length) return undefined;
    entries.sort((a, b) => a.versions.lowest - b.versions.lowest);
    const first = entries[0]!;
    if (first.versions.lowest !== 0) {
      this.error(
        ['headerVersions', first.key],
        `Message ${name} has headerVersions starting at version ${first.versions.lowest}, but the first range must start at version 0 so that the map covers every version the schema describes, including versions that are no longer valid.`,
      );
      return undefined;
    }
    for (let i = 1; i < entries.length; i++) {
      const previous = entries[i - 1]!.versions;
      const current = entries[i]!;
      if (previous.openEnded) {
        this.error(
          ['headerVersions', current.key],
          `Message ${name} has an open-ended headerVersions range ${previous} that is followed by ${current.versions}; only the last range may be open-ended.`,
        );
        return undefined;
      }
      if (current.versions.lowest !== previous.highest + 1) {
        this.error(
          ['headerVersions', current.key],
          `Message ${name} has non-contiguous headerVersions: the range after ${previous} must start at version ${previous.highest + 1}, but it starts at version ${current.versions.lowest}.`,
        );
        return undefined;
      }
    }
    const last = entries[entries.length - 1]!;
    if (!last.versions.openEnded) {
      this.error(
        ['headerVersions', last.key],
        `Message ${name} has headerVersions whose last range ${last.versions} is not open-ended; the last range must end with a plus sign.`,
      );
      return undefined;
    }
    for (const entry of entries) {
      if (entry.versions.lowest > validVersions.highest) {
        this.error(
          ['headerVersions', entry.key],
          `Message ${name} has a headerVersions range ${entry.versions} that starts above the highest valid version ${validVersions.highest}.`,
        );
        return undefined;
      }
    }
    return entries.map(({ versions, headerVersion }) => ({ versions, headerVersion }));
  }

  /**
   * A version range, or `fallback` when the text is blank: Kafka's
   * Versions.parse treats "" like an absent key.
   */
  private versions(raw: unknown, path: JsonPath, fallback?: Versions): Versions | undefined {
    try {
      const text = String(raw);
      const trimmed = text.trim();
      if (trimmed === '') {
        if (fallback === undefined) this.error(path, `'${text}' is not a version range (expected none, N, N-M or N+)`);
        return fallback;
      }
      return Versions.parse(text);
    } catch (e) {
      this.error(path, (e as Error).message);
      return undefined;
    }
  }

  /**
   * Reports every reversed version range in the document (the message's
   * ranges, every field's at any depth, common structs' fields); true when
   * there was one. Kafka's Versions.parse reads "5-3" as none, which is never
   * what an author means.
   */
  private reportReversedRanges(raw: Raw, path: JsonPath): boolean {
    let found = false;
    for (const key of RANGE_KEYS) {
      const text = raw[key];
      const reversed = typeof text === 'string' ? /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(text) : null;
      if (reversed !== null && Number(reversed[1]) > Number(reversed[2])) {
        this.error(
          [...path, key],
          `${key} "${text as string}" is a reversed version range: its lowest version ${reversed[1]} is above its highest ${reversed[2]} (did you mean "${reversed[2]}-${reversed[1]}"? Kafka would read it as none)`,
        );
        found = true;
      }
    }
    for (const list of ['fields', 'commonStructs'] as const) {
      const children = raw[list];
      if (!Array.isArray(children)) continue;
      children.forEach((child, i) => {
        if (child !== null && typeof child === 'object' && this.reportReversedRanges(child as Raw, [...path, list, i])) found = true;
      });
    }
    return found;
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

/** Java's Double.parseDouble: decimal and hexadecimal floating-point literals, NaN and Infinity. */
export function parseJavaDouble(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^[+-]?(NaN|Infinity)$/.test(trimmed)) return Number(trimmed.replace('+', ''));
  const body = trimmed.replace(/[dDfF]$/, '');
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(body)) return Number(body);
  const hex = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?\d+)$/.exec(body);
  if (hex === null || hex[2]! + (hex[3] ?? '') === '') return undefined;
  const digits = hex[2]! + (hex[3] ?? '');
  const value = Number.parseInt(digits, 16) * 2 ** (Number(hex[4]) - 4 * (hex[3] ?? '').length);
  return hex[1] === '-' ? -value : value;
}

function flag(value: unknown): boolean {
  return value === true || value === 'true';
}
