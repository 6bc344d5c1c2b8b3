import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FrameError, FrameReader } from '../../runtime/index.js';

// FrameReader (runtime/framing.ts) is what both the broker and the client put
// in front of every socket: any chunking of a byte stream gives back exactly
// its frames, and a peer dribbling a frame in tiny segments cannot make it
// hold far more memory than the bytes sent.

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

function framed(bodies: Uint8Array[]): Uint8Array {
  const total = bodies.reduce((n, b) => n + 4 + b.length, 0);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const body of bodies) {
    view.setInt32(at, body.length);
    out.set(body, at + 4);
    at += 4 + body.length;
  }
  return out;
}

describe('FrameReader', () => {
  it('any chunking of a stream gives back exactly its frames, and frames already returned stay intact', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ minLength: 4000, maxLength: 9000 })), { maxLength: 12 }),
        fc.array(fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 5000 })), { minLength: 1, maxLength: 50 }),
        (bodies, cuts) => {
          const stream = framed(bodies);
          const reader = new FrameReader(1 << 20);
          const got: Uint8Array[] = [];
          let at = 0;
          let i = 0;
          while (at < stream.length) {
            const size = cuts[i++ % cuts.length]!;
            // Copies, as a socket gives fresh chunks; the reader may keep views of them.
            got.push(...reader.push(stream.slice(at, at + size)));
            at += size;
          }
          expect(got.map((f) => Buffer.from(f).toString('hex'))).toEqual(bodies.map((b) => Buffer.from(b).toString('hex')));
          expect(reader.pendingBytes).toBe(0);
        },
      ),
      { numRuns: 200, seed: 11 },
    );
  });

  it('a 1 MiB frame dribbled one byte per chunk holds about its size, not an object per byte', () => {
    const size = 1 << 20;
    const reader = new FrameReader(4 << 20);
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(size);
    expect(reader.push(prefix)).toEqual([]);
    gc();
    const before = process.memoryUsage();
    let early = 0;
    for (let i = 0; i < size - 1; i++) early += reader.push(Buffer.from([i & 0xff])).length;
    expect(early).toBe(0);
    gc();
    const after = process.memoryUsage();
    const held = after.heapUsed - before.heapUsed + (after.arrayBuffers - before.arrayBuffers);
    // Unbatched, each 1-byte chunk cost a Buffer object and its store: >100 MiB here.
    expect(held).toBeLessThan(8 * size);
    const [frame] = reader.push(Buffer.from([0xee]));
    expect(frame!.length).toBe(size);
    expect(frame![1000]).toBe(1000 & 0xff);
    expect(frame![size - 1]).toBe(0xee);
  });

  it('a few bytes in a few chunks cost little: 2,000 connections holding a prefix and 1 byte', () => {
    gc();
    const before = process.memoryUsage();
    const readers = Array.from({ length: 2000 }, () => {
      const reader = new FrameReader(1 << 20);
      reader.push(Buffer.from([0, 0, 0, 100]));
      reader.push(Buffer.from([1]));
      reader.push(Buffer.from([2]));
      return reader;
    });
    gc();
    const after = process.memoryUsage();
    expect(readers.every((r) => r.pendingBytes === 2)).toBe(true);
    // A fixed 64 KiB tail per connection would be 125 MiB here.
    expect(after.heapUsed - before.heapUsed + (after.arrayBuffers - before.arrayBuffers)).toBeLessThan(4 * 1024 * 1024);
  });

  it('a zero-size frame whose prefix ends a chunk is an empty frame (was a TypeError)', () => {
    const reader = new FrameReader(100);
    const push = (bytes: number[]): number[][] => reader.push(Buffer.from(bytes)).map((f) => [...f]);
    expect(push([0, 0, 0, 0])).toEqual([[]]);
    expect(push([0, 0])).toEqual([]);
    expect(push([0, 0, 0, 0, 0, 1])).toEqual([[]]);
    expect(push([7])).toEqual([[7]]);
  });

  it('refuses a negative or oversize size prefix before buffering', () => {
    expect(() => new FrameReader(100).push(Buffer.from([0x80, 0, 0, 0]))).toThrow(FrameError);
    expect(() => new FrameReader(100).push(Buffer.from([0, 0, 0, 101]))).toThrow(/exceeds the maximum of 100/);
  });
});
