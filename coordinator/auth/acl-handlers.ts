/**
 * CreateAcls (30), DescribeAcls (29), DeleteAcls (31). Without an authorizer
 * they answer SECURITY_DISABLED, as Kafka does. Who may call them is decided
 * by api-acls.ts (ALTER / DESCRIBE on the cluster).
 */
import type { Handler } from '../broker-context.js';
import { ErrorCode } from '../errors.js';
import type { AclFilter } from './acl.js';
import type { AclAuthorizer } from './authorizer.js';

const DISABLED = 'no authorizer is configured on this broker (authorizer.enabled)';

export function aclHandlers(authorizer: AclAuthorizer | null): Map<number, Handler> {
  const handlers = new Map<number, Handler>();
  handlers.set(30, async (req: any) => {
    if (!authorizer) return { throttleTimeMs: 0, results: req.creations.map(() => ({ errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: DISABLED })) };
    const bindings = req.creations.map((c: any) => ({
      resourceType: c.resourceType,
      resourceName: c.resourceName,
      patternType: c.resourcePatternType,
      principal: c.principal,
      host: c.host,
      operation: c.operation,
      permissionType: c.permissionType,
    }));
    const results = authorizer.create(bindings);
    return {
      throttleTimeMs: 0,
      results: results.map((why) => (why === null ? { errorCode: 0, errorMessage: null } : { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: why })),
    };
  });
  handlers.set(29, async (req: any) => {
    if (!authorizer) return { throttleTimeMs: 0, errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: DISABLED, resources: [] };
    const found = authorizer.describe(toFilter(req));
    const byResource = new Map<string, { resourceType: number; resourceName: string; patternType: number; acls: any[] }>();
    for (const b of found) {
      const key = `${b.resourceType}\u0000${b.patternType}\u0000${b.resourceName}`;
      let entry = byResource.get(key);
      if (!entry) byResource.set(key, (entry = { resourceType: b.resourceType, resourceName: b.resourceName, patternType: b.patternType, acls: [] }));
      entry.acls.push({ principal: b.principal, host: b.host, operation: b.operation, permissionType: b.permissionType });
    }
    return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, resources: [...byResource.values()] };
  });
  handlers.set(31, async (req: any) => {
    if (!authorizer) return { throttleTimeMs: 0, filterResults: req.filters.map(() => ({ errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: DISABLED, matchingAcls: [] })) };
    const removed = authorizer.delete(req.filters.map(toFilter));
    return {
      throttleTimeMs: 0,
      filterResults: removed.map((bindings) => ({
        errorCode: 0,
        errorMessage: null,
        matchingAcls: bindings.map((b) => ({ errorCode: 0, errorMessage: null, ...b })),
      })),
    };
  });
  return handlers;
}

function toFilter(f: any): AclFilter {
  return {
    resourceType: f.resourceTypeFilter,
    resourceName: f.resourceNameFilter,
    patternType: f.patternTypeFilter,
    principal: f.principalFilter,
    host: f.hostFilter,
    operation: f.operation,
    permissionType: f.permissionType,
  };
}
