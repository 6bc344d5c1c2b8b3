import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// The codec package as a user gets it: npm pack, install the tarball into a
// scratch project, import the public entry points (record batches with every
// compression codec, whose libraries are optional dependencies), run the installed CLI.
describe('the npm package', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'kipgen-pack-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('packs, installs, and encodes and decodes through `kipgen` and `kipgen/runtime`', () => {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    execFileSync(npm, ['pack', '--silent', '--pack-destination', scratch], { cwd: process.cwd(), stdio: 'pipe', timeout: 180_000 });
    const tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();

    const app = join(scratch, 'app');
    execFileSync('mkdir', ['-p', app]);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    execFileSync(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', join(scratch, tarball!)], { cwd: app, stdio: 'pipe', timeout: 240_000 });

    writeFileSync(
      join(app, 'main.js'),
      `import { EndTxnRequest, apis } from 'kipgen';
import { DecodeError, Reader, decodeRecordBatch, encodeRecordBatch } from 'kipgen/runtime';
const bytes = EndTxnRequest.encode(EndTxnRequest.create({ transactionalId: 'tx', producerId: 42n, producerEpoch: 3, committed: true }), 4);
const back = EndTxnRequest.decode(bytes, 4);
let error = '';
try { EndTxnRequest.decode(bytes.subarray(0, 5), 4); } catch (e) { error = e instanceof DecodeError ? e.message : 'wrong error'; }
// The optional codec libraries install from the registry with the package and load on first use.
const codecs = ['gzip', 'snappy', 'lz4', 'zstd'].map((compression) => {
  const batch = decodeRecordBatch(encodeRecordBatch({ compression, records: [{ value: Buffer.from('v'.repeat(500)) }] }));
  return batch.compression + ':' + batch.records[0].value.length;
});
console.log(JSON.stringify({ hex: Buffer.from(bytes).toString('hex'), json: EndTxnRequest.toJson(back, 4), api: apis.get(26).name, reader: typeof Reader, error, codecs }));
`,
    );
    const run = spawnSync(process.execPath, ['main.js'], { cwd: app, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const out = JSON.parse(run.stdout) as { hex: string; json: unknown; api: string; reader: string; error: string; codecs: string[] };
    expect(out.codecs).toEqual(['gzip:500', 'snappy:500', 'lz4:500', 'zstd:500']);
    expect(out.hex).toBe('03' + '7478' + '000000000000002a' + '0003' + '01' + '00');
    expect(out.json).toEqual({ transactionalId: 'tx', producerId: '42', producerEpoch: 3, committed: true });
    expect(out.api).toBe('EndTxn');
    expect(out.reader).toBe('function');
    expect(out.error).toMatch(/^EndTxnRequest\.producerId: needs 8 bytes/);

    const help = spawnSync(join(app, 'node_modules', '.bin', 'kipgen'), ['generate', '--help'], { encoding: 'utf8' });
    expect(help.stdout).toMatch(/Usage: kipgen generate/);
  }, 400_000);
});
