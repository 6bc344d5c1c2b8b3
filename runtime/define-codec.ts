import type { ApiMessageCodec, MessageCodec, SpecType, VersionRange } from './codec.js';
import { explainEncodeFailure } from './encode-diagnosis.js';
import { DecodeError, decodeErrorAt, UnsupportedVersionError } from './errors.js';
import type { JsonObject } from './json.js';
import { Reader } from './reader.js';
import { Writer, writeChunks } from './writer.js';

/** What a generated module supplies; encode and decode are derived from it. */
export interface CodecParts<T, I = Partial<T>> {
  name: string;
  type: SpecType;
  apiKey: number | null;
  validVersions: VersionRange;
  flexibleVersions: VersionRange | null;
  create(fields?: I): T;
  size(message: T, version: number): number;
  write(writer: Writer, message: T, version: number): void;
  read(reader: Reader, version: number): T;
  toJson(message: T, version: number): JsonObject;
  fromJson(json: unknown, version: number): T;
}

/** Builds a codec from generated parts, adding version checks, encode and decode. */
export function defineCodec<T, I = Partial<T>>(parts: CodecParts<T, I>): MessageCodec<T, I> {
  const { name, validVersions } = parts;
  const check = (version: number): void => {
    if (!Number.isInteger(version) || version < validVersions.lowest || version > validVersions.highest) {
      throw new UnsupportedVersionError(`${name} has no version ${version} (valid: ${validVersions.lowest}-${validVersions.highest})`);
    }
  };
  // A throw from size or write on a value of the wrong type (a JavaScript
  // caller) becomes an EncodeError naming the field; the try blocks cost
  // nothing until something throws. `write` stays the generated function
  // itself (no wrapper call per frame): encodeFrame explains its failures.
  const explain = (error: unknown, message: T, version: number): unknown => explainEncodeFailure(error, name, parts, message, version);
  return {
    ...parts,
    size(message, version) {
      check(version);
      try {
        return parts.size(message, version);
      } catch (error) {
        throw explain(error, message, version);
      }
    },
    encode(message, version) {
      check(version);
      try {
        const writer = Writer.forSize(parts.size(message, version));
        parts.write(writer, message, version);
        return writer.finish();
      } catch (error) {
        throw explain(error, message, version);
      }
    },
    encodeChunks(message, version) {
      check(version);
      try {
        return writeChunks(parts.size(message, version), (writer) => parts.write(writer, message, version));
      } catch (error) {
        throw explain(error, message, version);
      }
    },
    decode(bytes, version, options) {
      check(version);
      const reader = new Reader(bytes);
      try {
        const message = parts.read(reader, version);
        const left = reader.remaining;
        if (left !== 0 && options?.onTrailingBytes !== undefined) options.onTrailingBytes(left);
        else reader.expectEnd();
        return message;
      } catch (error) {
        throw withVersionHint(decodeErrorAt(error, name), name, version);
      }
    },
    read(reader, version) {
      check(version);
      try {
        return parts.read(reader, version);
      } catch (error) {
        throw withVersionHint(decodeErrorAt(error, name), name, version);
      }
    },
    toJson(message, version) {
      check(version);
      return parts.toJson(message, version);
    },
    fromJson(json, version) {
      check(version);
      return parts.fromJson(json, version);
    },
  };
}

/** Built only on the error path: says, for a count no message holds, what the likely mistake is. */
function withVersionHint(error: DecodeError, name: string, version: number): DecodeError {
  if (!error.implausibleCount) return error;
  return error.withHint(`a count this large suggests the bytes are not a ${name} v${version}: another version, or another message`);
}

/** A request or response codec, which also knows its header version. */
export function defineApiCodec<T, I = Partial<T>>(parts: CodecParts<T, I> & { apiKey: number; headerVersion(version: number): number }): ApiMessageCodec<T, I> {
  return { ...defineCodec(parts), apiKey: parts.apiKey, headerVersion: parts.headerVersion };
}
