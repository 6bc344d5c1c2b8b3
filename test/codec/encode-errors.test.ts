/**
 * A JavaScript caller can pass a message the types forbid: a field missing or
 * of the wrong type. Encoding it throws an EncodeError that names the field by
 * its path and says what was wrong — not a TypeError from inside the encoder.
 * Through every way in: encode, encodeChunks, size, and a frame (encodeFrame,
 * encodeFrameChunks: how the client sends).
 */
import { describe, expect, it } from 'vitest';
import { EndTxnRequest, MetadataRequest, ProduceRequest, RequestHeader } from '../../generated/index.js';
import { EncodeError, encodeFrame, encodeFrameChunks, UnsupportedVersionError } from '../../runtime/index.js';

function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (error) {
    return error as Error;
  }
  throw new Error('did not throw');
}

describe('EncodeError names the field a JavaScript caller got wrong', () => {
  it('MetadataRequest v12, a topic without topicId → topics[0].topicId (encode, encodeChunks, size, in a frame)', () => {
    // Not through create(), which would fill topicId with its default.
    const message = { ...MetadataRequest.create(), topics: [{ name: 'orders' } as never] };
    const header = RequestHeader.create({ requestApiKey: 3, requestApiVersion: 12, correlationId: 1, clientId: 'c' });
    for (const f of [
      () => MetadataRequest.encode(message, 12),
      () => MetadataRequest.encodeChunks(message, 12),
      () => encodeFrame(RequestHeader, header, 2, MetadataRequest, message, 12),
      () => encodeFrameChunks(RequestHeader, header, 2, MetadataRequest, message, 12),
    ]) {
      const error = thrown(f);
      expect(error).toBeInstanceOf(EncodeError);
      expect(error.message).toMatch(/^MetadataRequest\.topics\[0\]\.topicId: missing \(undefined\); version 12 writes it/);
      expect(error.cause).toBeInstanceOf(TypeError);
    }
    // v9 has no topicId: the same message encodes.
    expect(MetadataRequest.decode(MetadataRequest.encode(message, 9), 9).topics).toEqual([{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'orders' }]);
  });

  it('a missing string, a number for a bigint, a string for an int16, a number for a string', () => {
    expect(thrown(() => EndTxnRequest.size({ producerId: 1n, producerEpoch: 0, committed: true } as never, 3)).message).toMatch(
      /^EndTxnRequest\.transactionalId: missing \(undefined\); version 3 writes it/,
    );
    expect(thrown(() => EndTxnRequest.encode(EndTxnRequest.create({ transactionalId: 't', producerId: 5 as never }), 3)).message).toMatch(
      /^EndTxnRequest\.producerId: expected a bigint, got 5 \(number\)/,
    );
    expect(thrown(() => EndTxnRequest.encode(EndTxnRequest.create({ transactionalId: 't', producerEpoch: '5' as never }), 3)).message).toMatch(
      /^EndTxnRequest\.producerEpoch: expected an int16 .*got "5"/,
    );
    expect(thrown(() => EndTxnRequest.encode(EndTxnRequest.create({ transactionalId: 42 as never }), 0)).message).toMatch(
      /^EndTxnRequest\.transactionalId: expected a string, got 42/,
    );
  });

  it('deep paths: a mistyped partition index inside ProduceRequest', () => {
    const message = ProduceRequest.create({
      acks: -1,
      timeoutMs: 1000,
      topicData: [
        {
          name: 't',
          topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
          partitionData: [
            { index: 0, records: null },
            { index: '1' as never, records: null },
          ],
        },
      ],
    });
    const error = thrown(() => ProduceRequest.encode(message, 9));
    expect(error).toBeInstanceOf(EncodeError);
    expect(error.message).toMatch(/^ProduceRequest\.topicData\[0\]\.partitionData\[1\]\.index: /);
  });

  it('a top-level field left out that the version lacks is named as missing, not as a non-default value', () => {
    // MetadataRequest v12 has no includeClusterAuthorizedOperations (v8-10 only): left out, it is undefined, not its default false.
    const error = thrown(() => MetadataRequest.encode({ topics: null, allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false } as never, 12));
    expect(error).toBeInstanceOf(EncodeError);
    expect(error.message).toBe(
      'MetadataRequest.includeClusterAuthorizedOperations: missing (undefined); version 12 has no includeClusterAuthorizedOperations field, ' +
        'so it must hold the default false (MetadataRequest.create() fills every omitted field with its default)',
    );
    expect(error.cause).toBeInstanceOf(UnsupportedVersionError);
  });

  it('says the reason once: a bad uuid, a missing array', () => {
    const bad = thrown(() => MetadataRequest.encode(MetadataRequest.create({ topics: [{ name: 'x', topicId: '' }] }), 12));
    expect(bad.message).toBe('MetadataRequest.topics[0].topicId: expected a uuid (22 base64url characters), got ""');
    const missing = thrown(() => MetadataRequest.encode({ allowAutoTopicCreation: true } as never, 12));
    expect(missing.message).toBe('MetadataRequest.topics: missing (undefined)');
  });

  it("errors in Kafka's terms pass through: a non-default field the version lacks is UnsupportedVersionError", () => {
    const error = thrown(() => MetadataRequest.encode(MetadataRequest.create({ allowAutoTopicCreation: false }), 3));
    expect(error).toBeInstanceOf(UnsupportedVersionError);
    expect(error.message).toBe('Attempted to write a non-default allowAutoTopicCreation at version 3');
  });
});
