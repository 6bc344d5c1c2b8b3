/**
 * `acls.json` entries are checked field by field when the
 * broker starts (coordinator/auth/acl-file.ts). An entry that could never
 * match — a DENY without a host, an operation no request asks for — stops the
 * broker with the file, the entry and the field named, instead of loading and
 * being skipped while the ALLOWs beside it apply. Kafka's names are accepted
 * for the enumerations, and such an entry is applied.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startBroker, type Broker } from '../../coordinator/broker.js';
import { ErrorCode } from '../../coordinator/errors.js';
import { MetadataRequest, MetadataResponse } from '../../generated/index.js';
import { KafkaConnection } from '../../connection/connection.js';
import { ZERO_UUID } from '../../runtime/uuid.js';

const dirs: string[] = [];
const brokers: Broker[] = [];
afterEach(async () => {
  for (const b of brokers.splice(0)) await b.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function dataDirWith(acls: unknown[]): { dataDir: string; file: string } {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-acl-file-'));
  dirs.push(dataDir);
  const file = path.join(dataDir, 'acls.json');
  fs.writeFileSync(file, JSON.stringify({ acls }, null, 2));
  return { dataDir, file };
}

async function start(dataDir: string): Promise<Broker> {
  const broker = await startBroker(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      topics: [
        { name: 'public', partitions: 1 },
        { name: 'secret', partitions: 1 },
      ],
      authorizer: { enabled: true, superUsers: [], allowEveryoneIfNoAclFound: true },
    },
    { shareCoordinator: null, log: () => {} },
  );
  brokers.push(broker);
  return broker;
}

const ALLOW_ALL = { resourceType: 2, resourceName: '*', patternType: 3, principal: 'User:*', host: '*', operation: 2, permissionType: 3 };
const DENY_SECRET = { resourceType: 2, resourceName: 'secret', patternType: 3, principal: 'User:*', host: '*', operation: 8, permissionType: 2 };

describe('acls.json entries that could never match stop the broker at start', () => {
  const cases: Array<[what: string, entry: Record<string, unknown>, message: RegExp]> = [
    ['a DENY without host', { ...DENY_SECRET, host: undefined }, /acls\.json: acls\[1\]\.host: missing \(use "\*" for any host\)/],
    [
      'a DENY with an unknown operation name',
      { ...DENY_SECRET, operation: 'DESCRIBEE' },
      /acls\.json: acls\[1\]\.operation: "DESCRIBEE" is not one of ALL, READ, WRITE/,
    ],
    ['an operation code out of range', { ...DENY_SECRET, operation: 99 }, /acls\[1\]\.operation: 99 is not one of/],
    ['the ANY placeholder as an operation', { ...DENY_SECRET, operation: 'ANY' }, /acls\[1\]\.operation: "ANY" is not one of/],
    ['a permission other than ALLOW or DENY', { ...DENY_SECRET, permissionType: 'REFUSE' }, /acls\[1\]\.permissionType: "REFUSE" is not one of DENY, ALLOW/],
    ['a MATCH pattern type', { ...DENY_SECRET, patternType: 'MATCH' }, /acls\[1\]\.patternType: "MATCH" is not one of LITERAL, PREFIXED/],
    ['an unknown resource type', { ...DENY_SECRET, resourceType: 'QUEUE' }, /acls\[1\]\.resourceType: "QUEUE" is not one of/],
    ['a misspelt field', { ...DENY_SECRET, permissionType: undefined, permission: 'DENY' }, /acls\[1\]: unknown field\(s\) permission/],
    ['a principal that is not a string', { ...DENY_SECRET, principal: ['User:bob'] }, /acls\[1\]\.principal: expected a string/],
    ['a principal without a type', { ...DENY_SECRET, principal: 'bob' }, /acls\[1\]: principal "bob" is not Type:name/],
    ['an empty resource name', { ...DENY_SECRET, resourceName: '' }, /acls\[1\]: the resource name is empty/],
  ];
  for (const [what, entry, message] of cases) {
    it(what, async () => {
      const { dataDir, file } = dataDirWith([ALLOW_ALL, entry]);
      await expect(start(dataDir)).rejects.toThrow(message);
      await expect(start(dataDir)).rejects.toThrow(file);
    });
  }
});

describe("entries written with Kafka's names load and apply", () => {
  it('a DENY of Describe on a topic, in names, hides the topic; the ALLOW beside it still applies', async () => {
    const { dataDir } = dataDirWith([
      { resourceType: 'Topic', resourceName: '*', patternType: 'literal', principal: 'User:*', host: '*', operation: 'All', permissionType: 'Allow' },
      { resourceType: 'TOPIC', resourceName: 'secret', patternType: 'LITERAL', principal: 'User:*', host: '*', operation: 'Describe', permissionType: 'Deny' },
      {
        resourceType: 'Topic',
        resourceName: 'sec',
        patternType: 'Prefixed',
        principal: 'User:*',
        host: '*',
        operation: 'DescribeConfigs',
        permissionType: 'Deny',
      },
    ]);
    const broker = await start(dataDir);
    const c = await KafkaConnection.connect({ host: '127.0.0.1', port: broker.port, requestTimeoutMs: 5_000 });
    try {
      const response = await c.send(
        MetadataRequest,
        MetadataRequest.create({
          topics: [
            { name: 'public', topicId: ZERO_UUID },
            { name: 'secret', topicId: ZERO_UUID },
          ],
          allowAutoTopicCreation: false,
        }),
        9,
        MetadataResponse,
      );
      expect(response.topics.map((t) => [t.name, t.errorCode])).toEqual([
        ['public', ErrorCode.NONE],
        ['secret', ErrorCode.TOPIC_AUTHORIZATION_FAILED],
      ]);
    } finally {
      await c.close();
    }
  });
});
