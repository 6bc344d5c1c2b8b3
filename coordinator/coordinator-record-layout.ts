/**
 * Kafka's byte layout of coordinator records (conformance/vectors/README.md,
 * "Coordinator records"): a key is the int16 record type (the spec's apiKey)
 * followed by the key body at version 0 (MessageUtil.toCoordinatorTypePrefixedBytes);
 * a value is the int16 version followed by the body (toVersionPrefixedBytes);
 * a null value is a tombstone.
 */
import type { MessageCodec } from '../runtime/index.js';
import { DecodeError } from '../runtime/index.js';

export function encodeCoordinatorKey<T>(codec: MessageCodec<T>, key: T): Uint8Array {
  if (codec.apiKey === null) throw new Error(`${codec.name} is not a coordinator record (no apiKey)`);
  return prefixed(codec.apiKey, codec.encode(key, 0));
}

export function encodeCoordinatorValue<T>(codec: MessageCodec<T>, value: T, version: number): Uint8Array {
  return prefixed(version, codec.encode(value, version));
}

/** The record type of a coordinator key (its first int16). */
export function coordinatorRecordType(key: Uint8Array): number {
  if (key.length < 2) throw new DecodeError(`coordinator record key of ${key.length} bytes has no record type`);
  return (((key[0]! << 8) | key[1]!) << 16) >> 16;
}

export function decodeCoordinatorKey<T>(codec: MessageCodec<T>, key: Uint8Array): T {
  const type = coordinatorRecordType(key);
  if (type !== codec.apiKey) throw new DecodeError(`record type ${type} is not ${codec.name} (${codec.apiKey})`);
  return codec.decode(key.subarray(2), 0);
}

export function decodeCoordinatorValue<T>(codec: MessageCodec<T>, value: Uint8Array): { version: number; value: T } {
  if (value.length < 2) throw new DecodeError(`${codec.name} of ${value.length} bytes has no version`);
  const version = (((value[0]! << 8) | value[1]!) << 16) >> 16;
  return { version, value: codec.decode(value.subarray(2), version) };
}

function prefixed(prefix: number, body: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafe(2 + body.length);
  out.writeInt16BE(prefix, 0);
  out.set(body, 2);
  return out;
}
