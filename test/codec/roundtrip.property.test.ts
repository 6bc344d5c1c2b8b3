import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadSpecs } from '../../generator/load.js';
import { messages } from '../../generated/index.js';
import { messageArbitrary } from '../support/arbitraries.js';
import { jsonDifference, toHex } from '../support/vectors.js';

// Random messages of every spec in message-schemas, at every version:
// JSON → message → bytes → message → bytes must be stable, and the JSON form
// must survive. Arbitraries come from the schema model, not from the codecs.
const { specs } = loadSpecs(['message-schemas']);

describe('round trip of random messages at every version', () => {
  for (const spec of specs) {
    it(`${spec.name} v${spec.validVersions}`, () => {
      const codec = messages[spec.name]!;
      for (const version of spec.validVersions) {
        fc.assert(
          fc.property(messageArbitrary(spec, version), (json) => {
            const message = codec.fromJson(json, version);
            const bytes = codec.encode(message, version);
            expect(codec.size(message, version)).toBe(bytes.length);
            expect(toHex(Buffer.concat(codec.encodeChunks(message, version)))).toBe(toHex(bytes));
            const decoded = codec.decode(bytes, version);
            expect(jsonDifference(codec.toJson(decoded, version), codec.toJson(message, version))).toBeUndefined();
            expect(toHex(codec.encode(decoded, version))).toBe(toHex(bytes));
          }),
          { numRuns: 25, seed: 0x1289 + version },
        );
      }
    });
  }
});
