import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { messages } from '../../generated/index.js';
import { checkVector, readVectors } from '../support/vectors.js';

// The vectors were made by Apache Kafka's own Java codecs; matching them byte
// for byte, both ways, is the bar for every message in message-schemas/.
const vectors = readVectors(fileURLToPath(new URL('../fixtures/vectors/', import.meta.url)));

describe('conformance vectors of message-schemas (fixture copy)', () => {
  it('has a vector file for every generated codec and a codec for every vector file', () => {
    expect([...vectors.keys()].sort()).toEqual(Object.keys(messages).sort());
  });

  for (const [name, lines] of vectors) {
    it(`${name}: ${lines.length} vectors pass both ways`, () => {
      const codec = messages[name];
      expect(codec, `no codec for ${name}`).toBeDefined();
      const failures = lines.map((v, i) => [i, checkVector(codec!, v)] as const).filter(([, f]) => f !== undefined);
      expect(failures.map(([i, f]) => `line ${i + 1}: ${f}`)).toEqual([]);
    });
  }
});
