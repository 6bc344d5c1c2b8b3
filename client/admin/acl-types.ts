/**
 * Kafka's ACL vocabulary (org.apache.kafka.common.acl and .resource) by name,
 * with the codes they travel as: resource types, pattern types, operations,
 * permission types; the bindings and filters of createAcls / describeAcls /
 * deleteAcls; and the authorized-operations bit field of Metadata and
 * DescribeCluster answers.
 */
import { ConfigError } from '../errors.js';

export const RESOURCE_TYPES = ['UNKNOWN', 'ANY', 'TOPIC', 'GROUP', 'CLUSTER', 'TRANSACTIONAL_ID', 'DELEGATION_TOKEN', 'USER'] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];

export const PATTERN_TYPES = ['UNKNOWN', 'ANY', 'MATCH', 'LITERAL', 'PREFIXED'] as const;
export type PatternType = (typeof PATTERN_TYPES)[number];

export const ACL_OPERATIONS = [
  'UNKNOWN',
  'ANY',
  'ALL',
  'READ',
  'WRITE',
  'CREATE',
  'DELETE',
  'ALTER',
  'DESCRIBE',
  'CLUSTER_ACTION',
  'DESCRIBE_CONFIGS',
  'ALTER_CONFIGS',
  'IDEMPOTENT_WRITE',
  'CREATE_TOKENS',
  'DESCRIBE_TOKENS',
  'TWO_PHASE_COMMIT',
] as const;
export type AclOperation = (typeof ACL_OPERATIONS)[number];

export const ACL_PERMISSION_TYPES = ['UNKNOWN', 'ANY', 'DENY', 'ALLOW'] as const;
export type AclPermissionType = (typeof ACL_PERMISSION_TYPES)[number];

/** Kafka's ResourcePattern: a concrete resource, or a PREFIXED family of them. */
export interface ResourcePattern {
  resourceType: ResourceType;
  name: string;
  patternType: PatternType;
}

/** Kafka's ResourcePatternFilter: null name matches any; ANY / MATCH pattern types widen the match. */
export interface ResourcePatternFilter {
  resourceType: ResourceType;
  name: string | null;
  patternType: PatternType;
}

/** Kafka's AccessControlEntry: `principal` as `User:alice`, `host` `*` for any. */
export interface AccessControlEntry {
  principal: string;
  host: string;
  operation: AclOperation;
  permissionType: AclPermissionType;
}

/** Kafka's AccessControlEntryFilter: null principal / host match any. */
export interface AccessControlEntryFilter {
  principal: string | null;
  host: string | null;
  operation: AclOperation;
  permissionType: AclPermissionType;
}

/** Kafka's AclBinding. */
export interface AclBinding {
  pattern: ResourcePattern;
  entry: AccessControlEntry;
}

/** Kafka's AclBindingFilter. */
export interface AclBindingFilter {
  patternFilter: ResourcePatternFilter;
  entryFilter: AccessControlEntryFilter;
}

/** Kafka's AclBindingFilter.ANY: every binding. */
export const ANY_ACL_BINDING_FILTER: AclBindingFilter = {
  patternFilter: { resourceType: 'ANY', name: null, patternType: 'ANY' },
  entryFilter: { principal: null, host: null, operation: 'ANY', permissionType: 'ANY' },
};

/** A name's code; `what` names the field for the error of a name Kafka does not have. */
export function codeOf<T extends string>(names: readonly T[], name: T, what: string): number {
  const code = names.indexOf(name);
  if (code < 0) throw new ConfigError(`${what} ${JSON.stringify(name)} is not one of ${names.join(', ')}`);
  return code;
}

/** A code's name; a code this client does not know is UNKNOWN, as Kafka's fromCode. */
export function nameOf<T extends string>(names: readonly T[], code: number): T {
  return names[code] ?? names[0]!;
}

/** "Not asked" in Metadata and DescribeCluster answers (Kafka's AUTHORIZED_OPERATIONS_OMITTED). */
const OPERATIONS_OMITTED = -2147483648;

/**
 * The operations a 32-bit field grants (Kafka's KafkaAdminClient.validAclOperations):
 * null when the broker was not asked; UNKNOWN, ANY and ALL are never listed.
 */
export function authorizedOperations(field: number): AclOperation[] | null {
  if (field === OPERATIONS_OMITTED) return null;
  const out: AclOperation[] = [];
  for (let code = 0; code < 32; code++) {
    if ((field & (1 << code)) === 0) continue;
    const name = nameOf(ACL_OPERATIONS, code);
    if (name !== 'UNKNOWN' && name !== 'ANY' && name !== 'ALL') out.push(name);
  }
  return out;
}

/** A broker (Kafka's Node); `rack` null when it has none. Replicas Metadata names but does not list are `host: ''`, `port: -1`, as Kafka's. */
export interface Node {
  id: number;
  host: string;
  port: number;
  rack: string | null;
}
