/**
 * Kafka's ACL model (org.apache.kafka.common.acl / resource), with the codes
 * that travel in CreateAcls, DescribeAcls and DeleteAcls: resource types,
 * pattern types, operations, permissions; matching of one entry against a
 * request, and of a filter against entries.
 */

export const ResourceType = { UNKNOWN: 0, ANY: 1, TOPIC: 2, GROUP: 3, CLUSTER: 4, TRANSACTIONAL_ID: 5, DELEGATION_TOKEN: 6, USER: 7 } as const;
export const PatternType = { UNKNOWN: 0, ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const;
export const AclOperation = {
  UNKNOWN: 0,
  ANY: 1,
  ALL: 2,
  READ: 3,
  WRITE: 4,
  CREATE: 5,
  DELETE: 6,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
  CREATE_TOKENS: 13,
  DESCRIBE_TOKENS: 14,
  TWO_PHASE_COMMIT: 15,
} as const;
export const AclPermission = { UNKNOWN: 0, ANY: 1, DENY: 2, ALLOW: 3 } as const;

/** The only cluster resource's name. */
export const CLUSTER_NAME = 'kafka-cluster';
export const WILDCARD = '*';

export interface AclBinding {
  resourceType: number;
  resourceName: string;
  patternType: number;
  principal: string;
  host: string;
  operation: number;
  permissionType: number;
}

export interface AclFilter {
  resourceType: number;
  resourceName: string | null;
  patternType: number;
  principal: string | null;
  host: string | null;
  operation: number;
  permissionType: number;
}

const nameOf = (table: Record<string, number>, code: number): string => Object.keys(table).find((k) => table[k] === code) ?? `code ${code}`;
export const resourceTypeName = (code: number): string => nameOf(ResourceType, code);
export const operationName = (code: number): string => nameOf(AclOperation, code);
export const patternTypeName = (code: number): string => nameOf(PatternType, code);

/** Why a binding cannot be stored, or null (Kafka's AclControlManager.validateNewAcl). */
export function invalidBinding(b: AclBinding): string | null {
  if (![2, 3, 4, 5, 6, 7].includes(b.resourceType)) return `resource type ${resourceTypeName(b.resourceType)} is not a concrete type`;
  if (b.patternType !== PatternType.LITERAL && b.patternType !== PatternType.PREFIXED)
    return `pattern type ${patternTypeName(b.patternType)} is not LITERAL or PREFIXED`;
  if (b.resourceName === '') return 'the resource name is empty';
  if (b.resourceType === ResourceType.CLUSTER && (b.resourceName !== CLUSTER_NAME || b.patternType !== PatternType.LITERAL)) {
    return `the cluster resource is LITERAL ${CLUSTER_NAME}`;
  }
  if (b.operation < AclOperation.ALL || b.operation > AclOperation.TWO_PHASE_COMMIT) return `operation ${b.operation} is not a concrete operation`;
  if (b.permissionType !== AclPermission.ALLOW && b.permissionType !== AclPermission.DENY) return `permission ${b.permissionType} is not ALLOW or DENY`;
  if (!/^[^:]+:.+$/.test(b.principal)) return `principal ${JSON.stringify(b.principal)} is not Type:name (e.g. User:alice)`;
  if (b.host === '') return 'the host is empty (use * for any host)';
  return null;
}

export function sameBinding(a: AclBinding, b: AclBinding): boolean {
  return (
    a.resourceType === b.resourceType &&
    a.resourceName === b.resourceName &&
    a.patternType === b.patternType &&
    a.principal === b.principal &&
    a.host === b.host &&
    a.operation === b.operation &&
    a.permissionType === b.permissionType
  );
}

/** Does the binding's resource pattern cover the resource `type:name`? */
export function patternMatches(b: AclBinding, type: number, name: string): boolean {
  if (b.resourceType !== type) return false;
  if (b.patternType === PatternType.LITERAL) return b.resourceName === name || b.resourceName === WILDCARD;
  if (b.patternType === PatternType.PREFIXED) return name.startsWith(b.resourceName);
  return false;
}

/**
 * Does an entry with operation `granted` allow `requested`? ALL covers
 * everything; READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS
 * implies DESCRIBE_CONFIGS (Kafka's AclEntry.supportedOperations / implies).
 * Implication applies to ALLOW only: a DENY denies its own operation (or ALL).
 */
export function allowImplies(granted: number, requested: number): boolean {
  if (granted === AclOperation.ALL || granted === requested) return true;
  if (requested === AclOperation.DESCRIBE) {
    return granted === AclOperation.READ || granted === AclOperation.WRITE || granted === AclOperation.DELETE || granted === AclOperation.ALTER;
  }
  if (requested === AclOperation.DESCRIBE_CONFIGS) return granted === AclOperation.ALTER_CONFIGS;
  return false;
}

/** The operations a resource type has (Kafka's AclEntry.supportedOperations), for authorized-operations answers. */
export const SUPPORTED_OPERATIONS: Readonly<Record<number, readonly number[]>> = {
  [ResourceType.TOPIC]: [
    AclOperation.READ,
    AclOperation.WRITE,
    AclOperation.CREATE,
    AclOperation.DESCRIBE,
    AclOperation.DELETE,
    AclOperation.ALTER,
    AclOperation.DESCRIBE_CONFIGS,
    AclOperation.ALTER_CONFIGS,
  ],
  [ResourceType.GROUP]: [AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS],
  [ResourceType.CLUSTER]: [
    AclOperation.CREATE,
    AclOperation.CLUSTER_ACTION,
    AclOperation.DESCRIBE_CONFIGS,
    AclOperation.ALTER_CONFIGS,
    AclOperation.IDEMPOTENT_WRITE,
    AclOperation.ALTER,
    AclOperation.DESCRIBE,
  ],
  [ResourceType.TRANSACTIONAL_ID]: [AclOperation.DESCRIBE, AclOperation.WRITE, AclOperation.TWO_PHASE_COMMIT],
  [ResourceType.DELEGATION_TOKEN]: [AclOperation.DESCRIBE],
  [ResourceType.USER]: [AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS],
};

/** A set of operations as the 32-bit field answers carry (Kafka's Utils.to32BitField of the operation codes). */
export function operationsField(operations: Iterable<number>): number {
  let field = 0;
  for (const op of operations) field |= 1 << op;
  return field;
}

export function denyCovers(denied: number, requested: number): boolean {
  return denied === AclOperation.ALL || denied === requested;
}

/** Filter matching (Kafka's AclBindingFilter.matches). */
export function filterMatches(f: AclFilter, b: AclBinding): boolean {
  if (f.resourceType !== ResourceType.ANY && f.resourceType !== b.resourceType) return false;
  if (f.principal !== null && f.principal !== b.principal) return false;
  if (f.host !== null && f.host !== b.host) return false;
  if (f.operation !== AclOperation.ANY && f.operation !== b.operation) return false;
  if (f.permissionType !== AclPermission.ANY && f.permissionType !== b.permissionType) return false;
  switch (f.patternType) {
    case PatternType.ANY:
      return f.resourceName === null || f.resourceName === b.resourceName;
    case PatternType.MATCH:
      // Every stored pattern that would apply to the named resource.
      return f.resourceName === null || patternMatches(b, b.resourceType, f.resourceName);
    case PatternType.LITERAL:
    case PatternType.PREFIXED:
      return b.patternType === f.patternType && (f.resourceName === null || f.resourceName === b.resourceName);
    default:
      return false;
  }
}

/** Why a filter is unusable, or null. */
export function invalidFilter(f: AclFilter): string | null {
  if (f.resourceType === ResourceType.UNKNOWN || f.resourceType > ResourceType.USER) return `resource type ${f.resourceType} is unknown`;
  if (f.patternType === PatternType.UNKNOWN || f.patternType > PatternType.PREFIXED) return `pattern type ${f.patternType} is unknown`;
  if (f.operation === AclOperation.UNKNOWN || f.operation > AclOperation.TWO_PHASE_COMMIT) return `operation ${f.operation} is unknown`;
  if (f.permissionType === AclPermission.UNKNOWN || f.permissionType > AclPermission.ALLOW) return `permission ${f.permissionType} is unknown`;
  return null;
}

/** The filter DescribeAcls and DeleteAcls name (same fields in both requests), as the authorizer takes it. */
export function aclFilterOf(wire: {
  readonly resourceTypeFilter: number;
  readonly resourceNameFilter: string | null;
  readonly patternTypeFilter: number;
  readonly principalFilter: string | null;
  readonly hostFilter: string | null;
  readonly operation: number;
  readonly permissionType: number;
}): AclFilter {
  return {
    resourceType: wire.resourceTypeFilter,
    resourceName: wire.resourceNameFilter,
    patternType: wire.patternTypeFilter,
    principal: wire.principalFilter,
    host: wire.hostFilter,
    operation: wire.operation,
    permissionType: wire.permissionType,
  };
}

/** Why the ACL APIs (DescribeAcls, CreateAcls, DeleteAcls) answer SECURITY_DISABLED, as Kafka does without an authorizer. */
export const ACLS_DISABLED = 'no authorizer is configured on this broker (authorizer.enabled)';
