/**
 * Errors raised by the codecs. Decoders only ever throw DecodeError for bad
 * input; encoders throw EncodeError for values the wire format cannot carry and
 * UnsupportedVersionError for a field the chosen version lacks.
 */

/** Malformed bytes. `path` names the field being read, e.g. `ProduceRequest.topicData[2].partitionData[0].records`. */
export class DecodeError extends Error {
  override name = 'DecodeError';
  /** Path segments from the outermost message to the failing field. */
  readonly segments: string[] = [];
  readonly reason: string;
  /**
   * Set by the reader when a length or count read from the wire is one no honest
   * message of this version holds: the likeliest mistake is decoding bytes of
   * another version (or another message), which the codec then says.
   */
  implausibleCount = false;
  /** Said after the reason: a likely cause, added by whoever knows it (the codec knows the version). */
  hint = '';

  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.reason = reason;
  }

  /** The dotted field path, e.g. `topicData[2].records`. */
  get path(): string {
    let out = '';
    for (const segment of this.segments) {
      out += segment.startsWith('[') || out === '' ? segment : `.${segment}`;
    }
    return out;
  }

  /**
   * Prepends a path segment while the error unwinds through the generated
   * readers. The message is rebuilt so that the final error reads naturally.
   */
  within(segment: string): this {
    this.segments.unshift(segment);
    this.message = `${this.path}: ${this.reason}${this.hint}`;
    return this;
  }

  /** Adds a likely cause after the reason (once: a second hint is ignored). */
  withHint(hint: string): this {
    if (this.hint !== '') return this;
    this.hint = ` (${hint})`;
    this.message = this.segments.length === 0 ? `${this.reason}${this.hint}` : `${this.path}: ${this.reason}${this.hint}`;
    return this;
  }
}

/** A DecodeError for a length or count that cannot be right (see DecodeError.implausibleCount). */
export function implausibleCount(reason: string): DecodeError {
  const error = new DecodeError(reason);
  error.implausibleCount = true;
  return error;
}

/** Wraps anything thrown while decoding into a DecodeError that carries the field path. */
export function decodeErrorAt(error: unknown, segment: string): DecodeError {
  // An empty segment: the error already names its field (a fixed-width run does).
  if (error instanceof DecodeError) return segment === '' ? error : error.within(segment);
  // A RangeError from a typed-array view or a TextDecoder failure means the
  // input was malformed in a way the reader did not anticipate: report it as such.
  // The original error stays as `cause`, so that a decoder bug can be told apart from bad input.
  const reason = error instanceof Error ? error.message : String(error);
  return new DecodeError(reason, { cause: error }).within(segment);
}

/** A value that cannot be written, such as a null in a non-nullable field or an out-of-range number. */
export class EncodeError extends Error {
  override name = 'EncodeError';
}

/**
 * Raised when a message sets a field that the requested version cannot carry,
 * mirroring Kafka's UnsupportedVersionException. Ignorable fields are dropped
 * silently instead.
 */
export class UnsupportedVersionError extends Error {
  override name = 'UnsupportedVersionError';
}

/** A JSON document that does not describe a valid message; `path` is a JSON path such as `topics[0].name`. */
export class JsonFormatError extends Error {
  override name = 'JsonFormatError';
  constructor(
    readonly path: string,
    reason: string,
    /** For a missing key: its own path (`topics[0].topicId`), where `path` is its object's. */
    readonly field?: string,
  ) {
    super(`${path}: ${reason}`);
  }
}

/**
 * A record batch uses a compression codec whose library is not installed
 * (snappy, lz4 and zstd are optional dependencies). Not a DecodeError: the
 * bytes may be fine; this process cannot read them. A broker answers
 * UNSUPPORTED_COMPRESSION_TYPE.
 */
export class CompressionUnavailableError extends Error {
  override name = 'CompressionUnavailableError';
  constructor(
    readonly codec: string,
    readonly packageName: string,
    cause?: unknown,
  ) {
    super(
      `compression ${codec} needs the npm package ${packageName}, which could not be loaded ` +
        `(install it: npm install ${packageName})${cause instanceof Error ? `: ${cause.message.split('\n')[0]}` : ''}`,
      { cause },
    );
  }
}
