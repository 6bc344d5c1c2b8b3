import type { Reader } from './reader.js';
import type { Writer } from './writer.js';
import type { JsonObject } from './json.js';

/** The kinds of spec Kafka's generator knows. */
export type SpecType = 'request' | 'response' | 'header' | 'data' | 'metadata' | 'coordinator-key' | 'coordinator-value';

/** An inclusive version range; `null` where a spec says "none". */
export interface VersionRange {
  readonly lowest: number;
  readonly highest: number;
}

/** How `decode` treats input it was given but the message did not use. */
export interface DecodeOptions {
  /**
   * Called with the count of bytes left after the message, instead of failing.
   * Kafka's brokers read requests this way (they never check for leftovers),
   * and some clients rely on it (docs/DESIGN.md §6). Without it, leftovers are a
   * DecodeError: a version mismatch or corruption.
   */
  onTrailingBytes?: (count: number) => void;
}

/**
 * What every generated message codec offers (docs/DESIGN.md §2). `I` is what
 * `create` takes: generated codecs take a partial at any depth (`<Message>Init`).
 */
export interface MessageCodec<T, I = Partial<T>> {
  readonly name: string;
  readonly type: SpecType;
  /** The API key of requests and responses, the record type of coordinator records, else null. */
  readonly apiKey: number | null;
  readonly validVersions: VersionRange;
  readonly flexibleVersions: VersionRange | null;
  /** A message with every field set to its default, overridden by `fields` (at any depth, for generated codecs). */
  create(fields?: I): T;
  encode(message: T, version: number): Uint8Array;
  /**
   * The same bytes as `encode`, as chunks that reference the message's large
   * byte values (records above all) instead of copying them: for a vectored
   * socket write. Those values must not change until the chunks are sent.
   */
  encodeChunks(message: T, version: number): Uint8Array[];
  /** Decodes exactly `bytes`: trailing bytes are an error unless `options.onTrailingBytes` takes them. */
  decode(bytes: Uint8Array, version: number, options?: DecodeOptions): T;
  /** Size pass: the bytes `write` will produce. */
  size(message: T, version: number): number;
  /** Writes into a Writer sized by `size`, so that several parts can share one allocation. */
  write(writer: Writer, message: T, version: number): void;
  /** Reads one message at the reader's cursor. */
  read(reader: Reader, version: number): T;
  toJson(message: T, version: number): JsonObject;
  fromJson(json: unknown, version: number): T;
}

/** A request or response codec, which also knows the header version each of its versions uses. */
export interface ApiMessageCodec<T, I = Partial<T>> extends MessageCodec<T, I> {
  readonly apiKey: number;
  headerVersion(version: number): number;
}
