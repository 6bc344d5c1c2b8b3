/**
 * coordinator/apis/: one file per API, named by its key and name, each a typed
 * definition with a mandatory authorization rule; the broker serves exactly the
 * list in apis/index.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Project, ts } from 'ts-morph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isServed } from '../../coordinator/apis/define.js';
import { BROKER_APIS } from '../../coordinator/apis/index.js';
import type { Broker } from '../../coordinator/broker.js';
import { startTestBroker, tempDir, TestClient } from './support/broker-harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const APIS_DIR = path.join(ROOT, 'coordinator/apis');
const NOT_AN_API = new Set(['define.ts', 'services.ts', 'index.ts']);

/** `AddShareAcksToTxn` → `add-share-acks-to-txn`, as the file names spell API names. */
function kebab(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}

describe('coordinator/apis: one file per API', () => {
  it('each API file is named <key>-<name>.ts after the API it defines, and index.ts lists every one exactly once', async () => {
    const files = fs.readdirSync(APIS_DIR).filter((f) => f.endsWith('.ts') && !NOT_AN_API.has(f));
    const defined = new Map<number, string>();
    for (const file of files) {
      const api = (await import(path.join(APIS_DIR, file))).default as (typeof BROKER_APIS)[number];
      expect(file, `${file} defines ${api.name} (key ${api.apiKey})`).toBe(`${String(api.apiKey).padStart(2, '0')}-${kebab(api.name)}.ts`);
      defined.set(api.apiKey, file);
    }
    const listed = BROKER_APIS.map((api) => api.apiKey);
    expect(new Set(listed).size, 'an API listed twice in apis/index.ts').toBe(listed.length);
    expect([...listed].sort((a, b) => a - b)).toEqual([...defined.keys()].sort((a, b) => a - b));
  });

  it('a definition without an authorization rule does not compile', () => {
    const project = new Project({ tsConfigFilePath: path.join(ROOT, 'tsconfig.json'), skipAddingFilesFromTsConfig: true });
    project.addSourceFileAtPath(path.join(APIS_DIR, 'define.ts'));
    const probe = project.createSourceFile(
      path.join(APIS_DIR, 'probe-without-rule.ts'),
      [
        "import { EndTxnRequest } from '../../generated/EndTxnRequest.js';",
        "import { EndTxnResponse } from '../../generated/EndTxnResponse.js';",
        "import { defineApi } from './define.js';",
        'export default defineApi({ request: EndTxnRequest, response: EndTxnResponse, handler: () => async () => EndTxnResponse.create() });',
      ].join('\n'),
      { overwrite: true },
    );
    const messages = probe.getPreEmitDiagnostics().map((d) => ts.flattenDiagnosticMessageText(d.compilerObject.messageText, '\n'));
    expect(
      messages.some((m) => m.includes("'authorize'")),
      messages.join('\n'),
    ).toBe(true);
  });
});

describe('the broker serves exactly its definitions', () => {
  let broker: Broker;
  let client: TestClient;
  beforeAll(async () => {
    broker = await startTestBroker({ dataDir: tempDir() });
    client = await TestClient.connect(broker.port);
  });
  afterAll(async () => {
    await client.close();
    await broker.close();
  });

  it('ApiVersions advertises each defined API in the range its definition serves', async () => {
    const response = await client.call(18, {}, 3);
    const advertised = new Map<number, [number, number]>(
      response.apiKeys.map((k: { apiKey: number; minVersion: number; maxVersion: number }) => [k.apiKey, [k.minVersion, k.maxVersion]]),
    );
    // startTestBroker runs without a share coordinator: the share APIs are not served.
    for (const api of BROKER_APIS) {
      if (!isServed(api, broker.config, null)) {
        expect(advertised.has(api.apiKey), `${api.name} is advertised`).toBe(false);
        continue;
      }
      expect(advertised.get(api.apiKey), api.name).toEqual([api.versions.min, api.versions.max]);
    }
  });
});
