/**
 * The ACL authorizer (Kafka's StandardAuthorizer semantics): super users may
 * do anything; otherwise a matching DENY wins over any ALLOW; an ALLOW
 * (directly, via ALL, or via an implied operation) allows; with no entry on
 * the resource at all, `allowEveryoneIfNoAclFound` decides; else deny.
 * Entries match on resource pattern, principal (or User:*), host (or *).
 *
 * The entries are durable: `acls.json` in the data directory, replaced
 * atomically (write, fsync, rename, fsync the directory) before a change is
 * acknowledged.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic } from '../cluster.js';
import { parseAclEntries } from './acl-file.js';
import { canonicalHost } from '../net/address.js';
import {
  AclPermission,
  allowImplies,
  denyCovers,
  filterMatches,
  invalidBinding,
  operationName,
  patternMatches,
  resourceTypeName,
  sameBinding,
  WILDCARD,
  type AclBinding,
  type AclFilter,
} from './acl.js';

export interface AuthorizerSettings {
  superUsers: readonly string[];
  allowEveryoneIfNoAclFound: boolean;
}

export interface Action {
  resourceType: number;
  resourceName: string;
  operation: number;
}

export interface Requester {
  principal: string;
  host: string;
}

const FILE = 'acls.json';

/**
 * An ACL's host applies to a client host (which the server gives in Java's
 * form, coordinator/net/address.ts) when it is `*` or the same address
 * written either way: `::1` and `0:0:0:0:0:0:0:1`, `::ffff:10.0.0.1` and
 * `10.0.0.1` are one host. Kafka compares the strings (StandardAuthorizerData);
 * comparing the addresses keeps ACLs written in Node's or Kafka's form working.
 */
function hostMatches(aclHost: string, clientHost: string): boolean {
  return aclHost === WILDCARD || aclHost === clientHost || canonicalHost(aclHost) === canonicalHost(clientHost);
}

export class AclAuthorizer {
  private acls: AclBinding[];
  private readonly file: string;

  constructor(
    dataDir: string,
    private readonly settings: AuthorizerSettings,
    private readonly log: (line: string) => void = () => {},
  ) {
    this.file = path.join(dataDir, FILE);
    this.acls = this.load();
  }

  private load(): AclBinding[] {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new Error(`cannot read ${this.file}: ${(error as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new Error(`${this.file} is not valid JSON (${(error as Error).message}); restore it or remove it to start without ACLs`);
    }
    return parseAclEntries(this.file, parsed);
  }

  private save(acls: AclBinding[]): void {
    writeFileAtomic(this.file, JSON.stringify({ acls }, null, 2) + '\n');
    this.acls = acls;
  }

  isSuperUser(principal: string): boolean {
    return this.settings.superUsers.includes(principal);
  }

  /** `logIfDenied` false: a check whose denial is an answer, not a refusal (Kafka's Action.logIfDenied, false for authorized operations). */
  authorize(who: Requester, action: Action, logIfDenied = true): boolean {
    if (this.settings.superUsers.includes(who.principal)) return true;
    let onResource = false;
    let allowed = false;
    for (const acl of this.acls) {
      if (!patternMatches(acl, action.resourceType, action.resourceName)) continue;
      onResource = true;
      if (acl.principal !== who.principal && acl.principal !== 'User:*') continue;
      if (!hostMatches(acl.host, who.host)) continue;
      if (acl.permissionType === AclPermission.DENY) {
        if (denyCovers(acl.operation, action.operation)) return logIfDenied ? this.decided(false, who, action, 'a DENY entry') : false;
      } else if (allowImplies(acl.operation, action.operation)) {
        allowed = true;
      }
    }
    if (allowed) return true;
    if (!onResource && this.settings.allowEveryoneIfNoAclFound) return true;
    return logIfDenied ? this.decided(false, who, action, onResource ? 'no ALLOW entry' : 'no ACL on the resource') : false;
  }

  /** Is `operation` allowed on at least one resource of this type (Kafka's authorizeByResourceType, KIP-679)? */
  authorizeAny(who: Requester, resourceType: number, operation: number): boolean {
    if (this.settings.superUsers.includes(who.principal)) return true;
    const applies = (acl: AclBinding): boolean =>
      acl.resourceType === resourceType && (acl.principal === who.principal || acl.principal === 'User:*') && hostMatches(acl.host, who.host);
    // A wildcard DENY on every resource of the type denies; otherwise any ALLOW not shadowed exactly by a DENY allows.
    const denies = this.acls.filter((a) => applies(a) && a.permissionType === AclPermission.DENY && denyCovers(a.operation, operation));
    if (denies.some((d) => d.resourceName === WILDCARD || (d.patternType === 4 && d.resourceName === ''))) return false;
    return this.acls.some(
      (a) =>
        applies(a) &&
        a.permissionType === AclPermission.ALLOW &&
        allowImplies(a.operation, operation) &&
        !denies.some((d) => d.patternType === a.patternType && d.resourceName === a.resourceName),
    );
  }

  private decided(result: boolean, who: Requester, action: Action, why: string): boolean {
    this.log(
      `authorizer: ${who.principal} from ${who.host} denied ${operationName(action.operation)} on ${resourceTypeName(action.resourceType)} ${action.resourceName} (${why})`,
    );
    return result;
  }

  /** Adds bindings (existing ones are kept once); one error message or null per binding, in order. */
  create(bindings: readonly AclBinding[]): Array<string | null> {
    const next = [...this.acls];
    const results = bindings.map((b) => {
      const why = invalidBinding(b);
      if (why) return why;
      if (!next.some((a) => sameBinding(a, b))) next.push({ ...b });
      return null;
    });
    if (next.length !== this.acls.length) this.save(next);
    return results;
  }

  describe(filter: AclFilter): AclBinding[] {
    return this.acls.filter((a) => filterMatches(filter, a));
  }

  /** Removes every binding any filter matches; the removed ones per filter. */
  delete(filters: readonly AclFilter[]): AclBinding[][] {
    const removed = filters.map((f) => this.acls.filter((a) => filterMatches(f, a)));
    const next = this.acls.filter((a) => !filters.some((f) => filterMatches(f, a)));
    if (next.length !== this.acls.length) this.save(next);
    return removed;
  }
}
