/**
 * createAcls, describeAcls and deleteAcls (Kafka's KafkaAdminClient of the same
 * names), sent to any broker (LeastLoadedBrokerOrActiveKController). createAcls
 * has one entry per binding, deleteAcls one per filter with the bindings it
 * matched, each with its own error (Kafka's DeleteAclsResult.FilterResults);
 * describeAcls answers one list or rejects with the broker's error.
 */
import {
  CreateAclsRequest,
  CreateAclsResponse,
  DeleteAclsRequest,
  DeleteAclsResponse,
  DescribeAclsRequest,
  DescribeAclsResponse,
} from '../../generated/index.js';
import { ErrorCode } from '../../runtime/error-codes.js';
import { ACL_OPERATIONS, ACL_PERMISSION_TYPES, codeOf, nameOf, PATTERN_TYPES, RESOURCE_TYPES, type AclBinding, type AclBindingFilter } from './acl-types.js';
import { deadlineOf, sendWithRetries, type AdminCallOptions, type AdminContext } from './call.js';
import { errorFromCode, InvalidRequestError } from '../errors.js';
import { AdminResult, type EntryError, type EntryOutcome } from './result.js';

/** One binding a deleteAcls filter matched, and whether deleting it failed (Kafka's DeleteAclsResult.FilterResult). */
export interface FilterResult {
  binding: AclBinding;
  error: EntryError | null;
}

/** The filter's wire fields (Kafka's DeleteAclsRequest.deleteAclsFilter / DescribeAclsRequest.Builder). */
function filterFields(filter: AclBindingFilter): {
  resourceTypeFilter: number;
  resourceNameFilter: string | null;
  patternTypeFilter: number;
  principalFilter: string | null;
  hostFilter: string | null;
  operation: number;
  permissionType: number;
} {
  const { patternFilter: p, entryFilter: e } = filter;
  return {
    resourceTypeFilter: codeOf(RESOURCE_TYPES, p.resourceType, 'resourceType'),
    resourceNameFilter: p.name,
    patternTypeFilter: codeOf(PATTERN_TYPES, p.patternType, 'patternType'),
    principalFilter: e.principal,
    hostFilter: e.host,
    operation: codeOf(ACL_OPERATIONS, e.operation, 'operation'),
    permissionType: codeOf(ACL_PERMISSION_TYPES, e.permissionType, 'permissionType'),
  };
}

function bindingOf(wire: {
  resourceType: number;
  resourceName: string;
  patternType: number;
  principal: string;
  host: string;
  operation: number;
  permissionType: number;
}): AclBinding {
  return {
    pattern: { resourceType: nameOf(RESOURCE_TYPES, wire.resourceType), name: wire.resourceName, patternType: nameOf(PATTERN_TYPES, wire.patternType) },
    entry: {
      principal: wire.principal,
      host: wire.host,
      operation: nameOf(ACL_OPERATIONS, wire.operation),
      permissionType: nameOf(ACL_PERMISSION_TYPES, wire.permissionType),
    },
  };
}

/** Kafka's AclBindingFilter.findIndefiniteField, for a binding to create: the first field that would match more than one value, or null. */
function indefiniteField(b: AclBinding): string | null {
  const { pattern: p, entry: e } = b;
  if (p.resourceType === 'ANY' || p.resourceType === 'UNKNOWN') return `Resource type is ${p.resourceType}.`;
  if (p.name == null) return 'Resource name is NULL.';
  if (p.patternType === 'ANY' || p.patternType === 'MATCH' || p.patternType === 'UNKNOWN') return `Resource pattern type is ${p.patternType}.`;
  if (e.principal == null) return 'Principal is NULL.';
  if (e.host == null) return 'Host is NULL.';
  if (e.operation === 'ANY' || e.operation === 'UNKNOWN') return `Operation is ${e.operation}.`;
  if (e.permissionType === 'ANY' || e.permissionType === 'UNKNOWN') return `Permission type is ${e.permissionType}.`;
  return null;
}

const bindingKey = (b: AclBinding): string =>
  JSON.stringify([b.pattern.resourceType, b.pattern.name, b.pattern.patternType, b.entry.principal, b.entry.host, b.entry.operation, b.entry.permissionType]);
const filterKey = (f: AclBindingFilter): string => JSON.stringify(filterFields(f));

export async function createAcls(admin: AdminContext, acls: readonly AclBinding[], options: AdminCallOptions = {}): Promise<AdminResult<AclBinding, void>> {
  const deadline = deadlineOf(admin, options);
  const outcomes = new Map<AclBinding, EntryOutcome<void>>();
  const sent: AclBinding[] = [];
  const seen = new Set<string>();
  for (const acl of acls) {
    const key = bindingKey(acl);
    if (seen.has(key)) continue;
    seen.add(key);
    const indefinite = indefiniteField(acl);
    if (indefinite !== null) {
      outcomes.set(acl, { ok: false, error: new InvalidRequestError(ErrorCode.INVALID_REQUEST, `Invalid ACL creation: ${indefinite}`) });
      continue;
    }
    filterFields({ patternFilter: acl.pattern, entryFilter: acl.entry });
    outcomes.set(acl, {
      ok: false,
      error: errorFromCode(ErrorCode.UNKNOWN_SERVER_ERROR, 'createAcls', 'the broker reported no creation result for the given ACL'),
    });
    sent.push(acl);
  }
  if (sent.length === 0) return new AdminResult(outcomes);
  const { response } = await sendWithRetries(admin, 'createAcls', 'any', deadline, CreateAclsRequest, CreateAclsResponse, () =>
    CreateAclsRequest.create({
      creations: sent.map((b) => ({
        resourceType: codeOf(RESOURCE_TYPES, b.pattern.resourceType, 'resourceType'),
        resourceName: b.pattern.name,
        resourcePatternType: codeOf(PATTERN_TYPES, b.pattern.patternType, 'patternType'),
        principal: b.entry.principal,
        host: b.entry.host,
        operation: codeOf(ACL_OPERATIONS, b.entry.operation, 'operation'),
        permissionType: codeOf(ACL_PERMISSION_TYPES, b.entry.permissionType, 'permissionType'),
      })),
    }),
  );
  // Results come in the order of the creations (Kafka's createAcls pairs them by position).
  sent.forEach((binding, i) => {
    const result = response.results[i];
    if (result === undefined) return;
    outcomes.set(
      binding,
      result.errorCode === ErrorCode.NONE
        ? { ok: true, value: undefined }
        : { ok: false, error: errorFromCode(result.errorCode, `createAcls of ${describeBinding(binding)}`, result.errorMessage) },
    );
  });
  return new AdminResult(outcomes);
}

/** The bindings `filter` matches; rejects with the broker's error (SECURITY_DISABLED, CLUSTER_AUTHORIZATION_FAILED, ...). */
export async function describeAcls(admin: AdminContext, filter: AclBindingFilter, options: AdminCallOptions = {}): Promise<AclBinding[]> {
  const deadline = deadlineOf(admin, options);
  const fields = filterFields(filter);
  // Kafka's describeAcls fails a filter with an UNKNOWN element before sending (AclBindingFilter.isUnknown).
  if (fields.resourceTypeFilter === 0 || fields.patternTypeFilter === 0 || fields.operation === 0 || fields.permissionType === 0) {
    throw new InvalidRequestError(ErrorCode.INVALID_REQUEST, 'The AclBindingFilter must not contain UNKNOWN elements.');
  }
  const { response } = await sendWithRetries(
    admin,
    'describeAcls',
    'any',
    deadline,
    DescribeAclsRequest,
    DescribeAclsResponse,
    () => DescribeAclsRequest.create(fields),
    { topLevelError: (r) => ({ code: r.errorCode, message: r.errorMessage }) },
  );
  return response.resources.flatMap((r) =>
    r.acls.map((a) => bindingOf({ resourceType: r.resourceType, resourceName: r.resourceName, patternType: r.patternType, ...a })),
  );
}

export async function deleteAcls(
  admin: AdminContext,
  filters: readonly AclBindingFilter[],
  options: AdminCallOptions = {},
): Promise<AdminResult<AclBindingFilter, FilterResult[]>> {
  const deadline = deadlineOf(admin, options);
  const outcomes = new Map<AclBindingFilter, EntryOutcome<FilterResult[]>>();
  const sent: AclBindingFilter[] = [];
  const seen = new Set<string>();
  for (const filter of filters) {
    const key = filterKey(filter);
    if (seen.has(key)) continue;
    seen.add(key);
    sent.push(filter);
    outcomes.set(filter, {
      ok: false,
      error: errorFromCode(ErrorCode.UNKNOWN_SERVER_ERROR, 'deleteAcls', 'the broker reported no deletion result for the given filter'),
    });
  }
  if (sent.length === 0) return new AdminResult(outcomes);
  const { response } = await sendWithRetries(admin, 'deleteAcls', 'any', deadline, DeleteAclsRequest, DeleteAclsResponse, () =>
    DeleteAclsRequest.create({ filters: sent.map(filterFields) }),
  );
  sent.forEach((filter, i) => {
    const result = response.filterResults[i];
    if (result === undefined) return;
    if (result.errorCode !== ErrorCode.NONE) {
      outcomes.set(filter, { ok: false, error: errorFromCode(result.errorCode, 'deleteAcls', result.errorMessage) });
      return;
    }
    outcomes.set(filter, {
      ok: true,
      value: result.matchingAcls.map((m) => {
        const binding = bindingOf(m);
        return {
          binding,
          error: m.errorCode === ErrorCode.NONE ? null : errorFromCode(m.errorCode, `deleteAcls of ${describeBinding(binding)}`, m.errorMessage),
        };
      }),
    });
  });
  return new AdminResult(outcomes);
}

/** `ALLOW User:alice READ on TOPIC LITERAL orders`, for messages. */
function describeBinding(b: AclBinding): string {
  return `${b.entry.permissionType} ${b.entry.principal} ${b.entry.operation} on ${b.pattern.resourceType} ${b.pattern.patternType} ${b.pattern.name}`;
}
