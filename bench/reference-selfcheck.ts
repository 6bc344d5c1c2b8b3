// Verifies bench/reference.ts against the conformance vectors made by Kafka's own Java
// codecs (../shared/conformance/vectors), every vector of every version of each message
// the bench encodes. Run: node --import tsx bench/reference-selfcheck.ts
// codec.bench.ts runs it too before measuring (unless --no-selfcheck).
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import * as ref from './reference.js';
import { toHex } from './wire.js';

const VECTORS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'shared', 'conformance', 'vectors');

const ENCODERS: Record<string, (m: unknown, v: number) => Uint8Array> = {
  ProduceRequest: ref.encodeProduceRequest,
  MetadataResponse: ref.encodeMetadataResponse,
  FetchResponse: ref.encodeFetchResponse,
  FindCoordinatorRequest: ref.encodeFindCoordinatorRequest,
  EndTxnRequest: ref.encodeEndTxnRequest,
  InitProducerIdRequest: ref.encodeInitProducerIdRequest,
  TxnShareAcknowledgeRequest: ref.encodeTxnShareAcknowledgeRequest,
  RequestHeader: ref.encodeRequestHeader,
};

export interface SelfcheckResult {
  ok: boolean;
  checked: number;
  failures: string[];
  skipped?: string;
}

export function runReferenceSelfcheck(): SelfcheckResult {
  if (!existsSync(VECTORS)) return { ok: true, checked: 0, failures: [], skipped: `no vectors at ${VECTORS}` };
  const failures: string[] = [];
  let checked = 0;
  for (const [name, enc] of Object.entries(ENCODERS)) {
    const file = join(VECTORS, `${name}.jsonl`);
    if (!existsSync(file)) {
      failures.push(`${name}: no vector file`);
      continue;
    }
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const vec = JSON.parse(line) as { version: number; json: unknown; hex: string };
      checked++;
      let got: string;
      try {
        got = toHex(enc(vec.json, vec.version));
      } catch (e) {
        failures.push(`${name} v${vec.version}: threw ${(e as Error).message}`);
        continue;
      }
      if (got !== vec.hex) failures.push(`${name} v${vec.version}: bytes differ\n  want ${vec.hex.slice(0, 120)}\n  got  ${got.slice(0, 120)}`);
    }
  }
  return { ok: failures.length === 0, checked, failures };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const r = runReferenceSelfcheck();
  if (r.skipped) console.log(`skipped: ${r.skipped}`);
  for (const f of r.failures) console.log(f);
  console.log(`${r.checked - r.failures.length} passed, ${r.failures.length} failed`);
  process.exit(r.ok ? 0 : 1);
}
