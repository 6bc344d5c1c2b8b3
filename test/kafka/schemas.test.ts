/**
 * Schema currency: message-schemas/ against the JSON schemas inside Apache
 * Kafka 4.4.0's jars (kafka-clients' common/message, and the transaction,
 * share and group coordinators' record schemas). Every spec we share with
 * Kafka declares the same versions and the same wire layout, version by
 * version (`kipgen diff --wire-equal`); our only specs Kafka lacks are
 * KIP-1289's four.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'jsonc-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafka } from './support/cluster.js';
import { readJarEntries } from './support/jar.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const JARS = ['kafka-clients-4.4.0.jar', 'kafka-transaction-coordinator-4.4.0.jar', 'kafka-share-coordinator-4.4.0.jar', 'kafka-group-coordinator-4.4.0.jar'];

let dir: string;
const upstreamDirs: string[] = [];

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-kafka-schemas-'));
  const jars = kafka().javaClasspath.split(path.delimiter);
  for (const name of JARS) {
    const jar = jars.find((j) => path.basename(j) === name);
    if (jar === undefined) throw new Error(`${name} is not on Kafka 4.4's class path (test/kafka/pom.xml)`);
    const out = path.join(dir, name.replace(/\.jar$/, ''));
    fs.mkdirSync(out);
    const entries = readJarEntries(jar, (n) => /^common\/message\/[^/]+\.json$/.test(n));
    for (const [entry, content] of entries) fs.writeFileSync(path.join(out, path.basename(entry)), content);
    upstreamDirs.push(out);
  }
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

function specs(folder: string): Map<string, { validVersions?: string; flexibleVersions?: string; latestVersionUnstable?: boolean }> {
  const out = new Map();
  for (const f of fs.readdirSync(folder)) if (f.endsWith('.json')) out.set(f.replace(/\.json$/, ''), parse(fs.readFileSync(path.join(folder, f), 'utf8')));
  return out;
}

describe('message-schemas/ against Kafka 4.4.0', () => {
  it('kafka-clients 4.4.0 holds the request/response schemas (203 files), the coordinators their record schemas', () => {
    expect(upstreamDirs.map((d) => fs.readdirSync(d).length)).toEqual([203, 2, 4, 44]);
  });

  it('every version we declare of a Kafka spec has Kafka 4.4.0 wire layout (kipgen diff --wire-equal)', () => {
    const run = spawnSync(
      process.execPath,
      [path.join(ROOT, 'bin/kipgen.mjs'), 'diff', '--wire-equal', upstreamDirs.join(','), path.join(ROOT, 'message-schemas')],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    );
    expect(run.stdout + run.stderr).toContain('Wire-equal: every version ours declares of an upstream spec has upstream');
    expect(run.status).toBe(0);
  });

  it('no spec lags: each of ours that Kafka has declares the same validVersions, flexibleVersions and latestVersionUnstable', () => {
    const upstream = new Map(upstreamDirs.flatMap((d) => [...specs(d)]));
    const ours = specs(path.join(ROOT, 'message-schemas'));
    const lagging: string[] = [];
    const notUpstream: string[] = [];
    for (const [name, spec] of ours) {
      const theirs = upstream.get(name);
      if (theirs === undefined) {
        notUpstream.push(name);
        continue;
      }
      for (const key of ['validVersions', 'flexibleVersions', 'latestVersionUnstable'] as const) {
        if ((spec[key] ?? null) !== (theirs[key] ?? null)) lagging.push(`${name}.${key}: ours ${String(spec[key])}, Kafka 4.4 ${String(theirs[key])}`);
      }
    }
    expect(lagging).toEqual([]);
    expect(notUpstream.sort()).toEqual(['AddShareAcksToTxnRequest', 'AddShareAcksToTxnResponse', 'TxnShareAcknowledgeRequest', 'TxnShareAcknowledgeResponse']);
  });
});
