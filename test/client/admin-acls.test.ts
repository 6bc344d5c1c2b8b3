/**
 * Admin's ACL calls and the per-entry authorization errors of the other
 * calls, against a real kipgen broker with SASL and its authorizer on: an
 * administrator (a super user) grants alice some topics and a group; alice's
 * Admin gets TOPIC_AUTHORIZATION_FAILED for the others entry by entry, and
 * CLUSTER_AUTHORIZATION_FAILED for the calls that need the cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admin } from '../../client/admin.js';
import {
  ANY_ACL_BINDING_FILTER,
  ClusterAuthorizationError,
  GroupAuthorizationError,
  InvalidRequestError,
  OffsetSpec,
  TopicAuthorizationError,
  type AclBinding,
  type AclBindingFilter,
  type ConfigResource,
} from '../../client/index.js';
import { startSecureBroker, USERS, type SecureBroker } from '../security/support.js';

let secure: SecureBroker;
let root: Admin;
let alice: Admin;

function adminFor(user: keyof typeof USERS): Admin {
  return new Admin({
    bootstrapServers: secure.bootstrap('SASL_PLAINTEXT'),
    sasl: { mechanism: 'SCRAM-SHA-256', username: user, password: USERS[user] },
    logger: null,
    defaultApiTimeoutMs: 5_000,
  });
}

const allow = (
  resourceType: AclBinding['pattern']['resourceType'],
  name: string,
  operation: AclBinding['entry']['operation'],
  patternType: 'LITERAL' | 'PREFIXED' = 'LITERAL',
): AclBinding => ({
  pattern: { resourceType, name, patternType },
  entry: { principal: 'User:alice', host: '*', operation, permissionType: 'ALLOW' },
});

const aliceFilter: AclBindingFilter = {
  patternFilter: { resourceType: 'ANY', name: null, patternType: 'ANY' },
  entryFilter: { principal: 'User:alice', host: null, operation: 'ANY', permissionType: 'ANY' },
};

beforeAll(async () => {
  secure = await startSecureBroker({ authorizer: { enabled: true, superUsers: ['User:admin'], allowEveryoneIfNoAclFound: false } });
  root = adminFor('admin');
  alice = adminFor('alice');
});

afterAll(async () => {
  await alice?.close();
  await root?.close();
  await secure?.close();
});

describe('createAcls / describeAcls / deleteAcls', () => {
  it('creates bindings, describes them by filter, and deletes them with each matching binding', async () => {
    const grants = [allow('TOPIC', 'alice-', 'ALL', 'PREFIXED'), allow('TOPIC', 'events', 'DESCRIBE'), allow('GROUP', 'alice-job', 'READ')];
    const indefinite: AclBinding = { pattern: { resourceType: 'ANY', name: 'x', patternType: 'LITERAL' }, entry: grants[0]!.entry };
    const created = await root.createAcls([...grants, indefinite]);
    for (const g of grants) expect(created.entries.get(g)).toEqual({ ok: true, value: undefined });
    expect(() => created.get(indefinite)).toThrow(InvalidRequestError);
    expect(() => created.get(indefinite)).toThrow(/Invalid ACL creation: Resource type is ANY/);

    const described = await root.describeAcls(aliceFilter);
    expect(described).toHaveLength(3);
    expect(described).toEqual(expect.arrayContaining(grants));
    const topicsOnly = await root.describeAcls({ ...aliceFilter, patternFilter: { resourceType: 'TOPIC', name: 'alice-orders', patternType: 'MATCH' } });
    expect(topicsOnly).toEqual([grants[0]]);

    const groupFilter: AclBindingFilter = { ...aliceFilter, patternFilter: { resourceType: 'GROUP', name: null, patternType: 'ANY' } };
    const nothing: AclBindingFilter = { ...aliceFilter, entryFilter: { ...aliceFilter.entryFilter, principal: 'User:nobody' } };
    const deleted = await root.deleteAcls([groupFilter, nothing]);
    expect(deleted.get(groupFilter)).toEqual([{ binding: grants[2], error: null }]);
    expect(deleted.get(nothing)).toEqual([]);
    expect(await root.describeAcls(aliceFilter)).toHaveLength(2);
    // Put the group grant back for the tests below.
    (await root.createAcls([grants[2]!])).all();
  });

  it('a principal without cluster permissions may not manage ACLs: the call, or the entry, is refused', async () => {
    await expect(alice.describeAcls(ANY_ACL_BINDING_FILTER)).rejects.toThrow(ClusterAuthorizationError);
    const binding = allow('TOPIC', 'events', 'WRITE');
    const created = await alice.createAcls([binding]);
    expect(() => created.get(binding)).toThrow(ClusterAuthorizationError);
  });
});

describe("other calls' entries under ACLs", () => {
  it('createTopics: a topic alice may create succeeds beside one she may not', async () => {
    const result = await alice.createTopics([
      { name: 'alice-orders', numPartitions: 2 },
      { name: 'bob-orders', numPartitions: 1 },
    ]);
    expect(result.get('alice-orders').numPartitions).toBe(2);
    expect(() => result.get('bob-orders')).toThrow(TopicAuthorizationError);
  });

  it('describeTopics, listTopics and listOffsets leave out or refuse the topics alice may not describe', async () => {
    const described = await alice.describeTopics(['alice-orders', 'events', 'audit']);
    expect(described.get('alice-orders').partitions).toHaveLength(2);
    expect(described.get('events').partitions).toHaveLength(2);
    expect(() => described.get('audit')).toThrow(TopicAuthorizationError);
    // Authorized operations: what alice's ACLs allow, each topic its own; asking logs no denial.
    const logged = secure.logs.length;
    const withOperations = await alice.describeTopics(['alice-orders', 'events'], { includeAuthorizedOperations: true });
    expect(withOperations.get('alice-orders').authorizedOperations?.sort()).toEqual([
      'ALTER',
      'ALTER_CONFIGS',
      'CREATE',
      'DELETE',
      'DESCRIBE',
      'DESCRIBE_CONFIGS',
      'READ',
      'WRITE',
    ]);
    expect(withOperations.get('events').authorizedOperations).toEqual(['DESCRIBE']);
    expect(secure.logs.slice(logged).filter((line) => line.includes('denied'))).toEqual([]);
    const listed = [...(await alice.listTopics()).keys()].sort();
    expect(listed).toEqual(['alice-orders', 'events']);
    const ok = { topic: 'events', partition: 0 };
    const denied = { topic: 'audit', partition: 0 };
    const offsets = await alice.listOffsets([
      [ok, OffsetSpec.latest()],
      [denied, OffsetSpec.latest()],
    ]);
    expect(offsets.get(ok).offset).toBe(0n);
    expect(() => offsets.get(denied)).toThrow(TopicAuthorizationError);
  });

  it('describeConfigs and incrementalAlterConfigs: each resource with its own authorization', async () => {
    const mine: ConfigResource = { type: 'TOPIC', name: 'alice-orders' };
    const theirs: ConfigResource = { type: 'TOPIC', name: 'orders' };
    const group: ConfigResource = { type: 'GROUP', name: 'alice-job' };
    const described = await alice.describeConfigs([mine, theirs, group]);
    expect(described.get(mine).get('retention.ms')).toBeDefined();
    expect(() => described.get(theirs)).toThrow(TopicAuthorizationError);
    // READ on a group is not DESCRIBE_CONFIGS on it.
    expect(() => described.get(group)).toThrow(GroupAuthorizationError);
    const altered = await alice.incrementalAlterConfigs([
      [mine, [{ name: 'retention.ms', value: '5000', opType: 'SET' }]],
      [theirs, [{ name: 'retention.ms', value: '5000', opType: 'SET' }]],
    ]);
    expect(altered.entries.get(mine)).toEqual({ ok: true, value: undefined });
    expect(() => altered.get(theirs)).toThrow(TopicAuthorizationError);
  });

  it('describeCluster answers anyone, with the operations the principal may do on the cluster (none without DESCRIBE on it)', async () => {
    const asAlice = await alice.describeCluster({ includeAuthorizedOperations: true });
    expect(asAlice.nodes).toHaveLength(1);
    expect(asAlice.authorizedOperations).toEqual([]);
    const ok = await root.describeCluster({ includeAuthorizedOperations: true });
    expect(ok.nodes).toHaveLength(1);
    expect(ok.authorizedOperations).toHaveLength(7);
  });
});
