/**
 * Reads the entries of `acls.json`: every field of every
 * entry is checked before the broker starts, because an entry that loads but
 * can never match fails silently — a DENY without a host, or with an operation
 * no request asks for, would be skipped while the ALLOWs beside it still apply.
 *
 * An entry has exactly the seven fields of Kafka's AclBinding, as the broker
 * writes them: resourceType, resourceName, patternType, principal, host,
 * operation, permissionType. The four enumerations may be Kafka's codes (what
 * the broker writes) or Kafka's names, in any case, with or without
 * underscores (`READ`, `Read`, `DescribeConfigs`, as Kafka's
 * AclOperation.fromString and kafka-acls accept them). `host` is required: the
 * broker always writes it, and an entry without one is refused rather than
 * guessed (kafka-acls would default it to `*`; here the file says which hosts
 * an entry covers, or the broker does not start). Then the rules CreateAcls
 * applies (acl.ts invalidBinding, Kafka's AclControlManager.validateNewAcl).
 * A bad entry stops the broker with the file, the entry's index and the field.
 */
import { AclOperation, AclPermission, invalidBinding, PatternType, ResourceType, type AclBinding } from './acl.js';

const FIELDS = ['resourceType', 'resourceName', 'patternType', 'principal', 'host', 'operation', 'permissionType'] as const;

/** The values each enumeration may take in the file (the placeholders UNKNOWN and ANY match nothing). */
const CONCRETE: Record<'resourceType' | 'patternType' | 'operation' | 'permissionType', Record<string, number>> = {
  resourceType: without(ResourceType, 'UNKNOWN', 'ANY'),
  patternType: without(PatternType, 'UNKNOWN', 'ANY', 'MATCH'),
  operation: without(AclOperation, 'UNKNOWN', 'ANY'),
  permissionType: without(AclPermission, 'UNKNOWN', 'ANY'),
};

function without(table: Record<string, number>, ...names: string[]): Record<string, number> {
  return Object.fromEntries(Object.entries(table).filter(([name]) => !names.includes(name)));
}

const squash = (name: string): string => name.replace(/[_-]/g, '').toUpperCase();

/** The entries of an acls.json document, or an Error naming `file`, the entry and the field. */
export function parseAclEntries(file: string, document: unknown): AclBinding[] {
  if (typeof document !== 'object' || document === null || !Array.isArray((document as { acls?: unknown }).acls)) {
    throw new Error(`${file}: expected { "acls": [...] }`);
  }
  return (document as { acls: unknown[] }).acls.map((entry, i) => {
    const where = `${file}: acls[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new Error(`${where}: expected an object with ${FIELDS.join(', ')}`);
    const raw = entry as Record<string, unknown>;
    const unknown = Object.keys(raw).filter((key) => !(FIELDS as readonly string[]).includes(key));
    if (unknown.length > 0) throw new Error(`${where}: unknown field(s) ${unknown.join(', ')} (the fields are ${FIELDS.join(', ')})`);
    for (const field of FIELDS) {
      if (raw[field] === undefined || raw[field] === null) {
        const hint = field === 'host' ? ' (use "*" for any host)' : '';
        throw new Error(`${where}.${field}: missing${hint}; an entry without it could never match as written`);
      }
    }
    const text = (field: 'resourceName' | 'principal' | 'host'): string => {
      const value = raw[field];
      if (typeof value !== 'string') throw new Error(`${where}.${field}: expected a string, got ${JSON.stringify(value)}`);
      return value;
    };
    const code = (field: keyof typeof CONCRETE): number => {
      const table = CONCRETE[field];
      const value = raw[field];
      const allowed = Object.keys(table);
      if (typeof value === 'number' && Object.values(table).includes(value)) return value;
      if (typeof value === 'string') {
        const name = allowed.find((n) => squash(n) === squash(value));
        if (name !== undefined) return table[name]!;
      }
      throw new Error(`${where}.${field}: ${JSON.stringify(value)} is not one of ${allowed.join(', ')} (or their codes ${Object.values(table).join(', ')})`);
    };
    const binding: AclBinding = {
      resourceType: code('resourceType'),
      resourceName: text('resourceName'),
      patternType: code('patternType'),
      principal: text('principal'),
      host: text('host'),
      operation: code('operation'),
      permissionType: code('permissionType'),
    };
    const why = invalidBinding(binding);
    if (why) throw new Error(`${where}: ${why}`);
    return binding;
  });
}
