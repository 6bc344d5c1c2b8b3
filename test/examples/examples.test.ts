/**
 * The KIP-1289 use-case examples (examples/): each runs in this process
 * against its own embedded broker and must verify its own outcome; one runs
 * twice against a shared broker (`--bootstrap`); and `npm start`'s command
 * line runs as a child process, as on a fresh checkout.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { Admin } from '../../client/admin.js';
import { startBroker } from '../../coordinator/broker.js';
import { main } from '../../generator/cli.js';
import { registerExampleCommand } from '../../examples/cli.js';
import { EXAMPLES } from '../../examples/cli.js';
import { runConsumeTransformProduce } from '../../examples/consume-transform-produce.js';
import { runShareSource } from '../../examples/share-source.js';
import { runSourceAndSink } from '../../examples/source-and-sink.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Runs an example quietly; its narrative is kept for the failure message. */
function quiet(): { print: (line: string) => void; lines: string[] } {
  const lines: string[] = [];
  return { print: (line) => lines.push(line), lines };
}

describe('KIP-1289 examples', () => {
  it('consume-transform-produce (§2.1): every order priced exactly once; the aborted transaction is redelivered at once and never visible', async () => {
    const out = quiet();
    const s = await runConsumeTransformProduce({ print: out.print });
    expect(s.problems, out.lines.join('\n')).toEqual([]);
    expect(s).toMatchObject({
      ok: true,
      inputs: 12,
      outputsCommitted: 12,
      transactionsAborted: 1,
      abortedOutputsVisible: 0,
      lost: 0,
      duplicated: 0,
      wrong: 0,
    });
    expect(s.abortedOutputsInLog).toBeGreaterThan(0);
    expect(s.redelivered).toBe(s.abortedOutputsInLog);
    expect(s.redeliveredAfterMs).toBeLessThan(5_000); // the record lock is 30 s
    expect(s.metrics).toMatchObject({
      'share-transaction-active': 0,
      'share-transaction-abort-total': 1,
      'share-transaction-timeout-total': 0,
    });
    expect(s.metrics['share-transaction-commit-time-ms'].count).toBe(s.transactionsCommitted);
    expect(s.metrics['share-transaction-prepare-time-ms'].count).toBe(s.transactionsCommitted + 1);
    expect(s.prometheus.join('\n')).toMatch(/kafka_producer_share_transaction_abort_total\{[^}]*\} 1/);
    expect(out.lines.at(-1)).toBe(s.line);
    expect(s.line).toMatch(/^consume-transform-produce: OK — 12 orders in, 12 priced orders committed/);
  });

  it('share-source (§2.2): acks committed at checkpoints; a restart from checkpoint 2 while checkpoint 3 is prepared aborts checkpoint 3’s acks; the old instance is fenced', async () => {
    const out = quiet();
    const s = await runShareSource({ print: out.print });
    expect(s.problems, out.lines.join('\n')).toEqual([]);
    expect(s).toMatchObject({
      ok: true,
      inputs: 12,
      counted: 11,
      rejected: 1,
      recoveredFromCheckpoint: true,
      recovery: 'unknown',
      zombieFenced: true,
      lost: 0,
      duplicated: 0,
      leftOver: 0,
    });
    expect(s.redeliveredAfterRestart).toBeGreaterThan(0);
    expect(out.lines.join('\n')).toMatch(
      /completeTransaction\(checkpoint 2's transaction, 'commit'\) → unknown — .*the transaction open was checkpoint 3's: aborted/,
    );
    expect(out.lines.join('\n')).toMatch(/commitPrepared\(\): ProducerFencedError/);
  });

  it('source-and-sink (§2.3): output invisible until notifyCheckpointComplete; a restart from checkpoint 1 while checkpoint 2 is prepared rolls back its output and acks together', async () => {
    const out = quiet();
    const s = await runSourceAndSink({ print: out.print });
    expect(s.problems, out.lines.join('\n')).toEqual([]);
    expect(s).toMatchObject({
      ok: true,
      inputs: 15,
      outputsCommitted: 15,
      checkpointsAborted: 1,
      restoredCheckpoint: 1,
      recovery: 'unknown',
      visibleBeforeCommit: 0,
      lost: 0,
      duplicated: 0,
      leftOver: 0,
    });
    expect(s.checkpointsCompleted).toBeGreaterThanOrEqual(3);
    expect(s.redelivered).toBe(s.abortedOutputsInLog);
    expect(s.redelivered).toBeGreaterThan(0);
  });

  it('--bootstrap: two runs against one shared broker each verify only their own records; the first creates the topics with Admin', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kipgen-examples-shared-'));
    // orders-priced is missing: the example creates it (Admin.createTopics) and uses orders as it is.
    const broker = await startBroker(
      { port: 0, dataDir, topics: [{ name: 'orders', partitions: 3 }], shareGroup: { heartbeatIntervalMs: 200 } },
      { log: () => {} },
    );
    try {
      const bootstrap = `127.0.0.1:${broker.port}`;
      for (let run = 1; run <= 2; run++) {
        const out = quiet();
        const s = await runConsumeTransformProduce({ bootstrap, print: out.print });
        expect(s.problems, out.lines.join('\n')).toEqual([]);
        expect(s).toMatchObject({ ok: true, outputsCommitted: 12, lost: 0, duplicated: 0 });
        expect(out.lines[1]).toMatch(/^ {2}kipgen broker at 127\.0\.0\.1:\d+ \(records of this run carry header run=[0-9a-f]{6}\)$/);
      }
      const admin = new Admin({ bootstrapServers: bootstrap, logger: null });
      try {
        const topics = (await admin.describeTopics(['orders', 'orders-priced'])).all();
        expect([...topics.values()].map((t) => t.partitions.length)).toEqual([3, 3]);
      } finally {
        await admin.close();
      }
    } finally {
      await broker.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('kipgen example: lists the three examples and refuses an unknown one', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      await main(['node', 'kipgen', 'example'], [registerExampleCommand]);
      const listing = log.mock.calls.map((c) => String(c[0])).join('\n');
      expect(Object.keys(EXAMPLES)).toEqual(['consume-transform-produce', 'share-source', 'source-and-sink']);
      for (const [name, e] of Object.entries(EXAMPLES)) expect(listing).toMatch(new RegExp(`${name} +KIP-1289 ${e.section}: `));
      expect(process.exitCode ?? 0).toBe(0);
      await main(['node', 'kipgen', 'example', 'no-such-example'], [registerExampleCommand]);
      expect(process.exitCode).toBe(2);
      expect(error.mock.calls.map((c) => String(c[0])).join('\n')).toMatch(
        /no example "no-such-example"; the examples are: consume-transform-produce, share-source, source-and-sink/,
      );
    } finally {
      process.exitCode = undefined;
      log.mockRestore();
      error.mockRestore();
    }
  });

  it('npm start: regenerates the codecs, then runs consume-transform-produce end to end', async () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const start = pkg.scripts.start!;
    expect(start).toBe('node bin/kipgen.mjs generate && node bin/kipgen.mjs example consume-transform-produce');
    const started = Date.now();
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn('sh', ['-c', start], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 55_000);
      child.on('close', (c) => {
        clearTimeout(timer);
        resolve({ code: c, stdout, stderr });
      });
    });
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(Date.now() - started).toBeLessThan(60_000);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^kipgen generate: \d+ codecs and index\.ts in generated\/$/);
    expect(stdout).toMatch(/1\. produced 12 orders/);
    expect(stdout).toMatch(/abortTransaction\(\)/);
    expect(stdout).toMatch(/\(delivery 2\)/);
    expect(stdout).toMatch(/read_committed reader of orders-priced: 12 priced orders .*lost 0, duplicated 0/);
    expect(stdout).toMatch(/share-transaction-abort-total +1/);
    expect(stdout).toMatch(/kafka_producer_share_transaction_commit_time_ms_count\{/);
    expect(lines.at(-1)).toMatch(
      /^consume-transform-produce: OK — 12 orders in, 12 priced orders committed in \d+ transactions; 1 transaction aborted, its \d+ orders redelivered at once and its output never visible; lost 0, duplicated 0 \([\d.]+ s\)$/,
    );
  });
});
