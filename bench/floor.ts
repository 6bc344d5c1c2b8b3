// Floors: the least work any codec producing the same output can do. A floor row runs
// beside ours and the peer in the same rounds, so that its ratio to the peer says how
// far a row's target can be reached at all on this machine, and ours ÷ floor how much
// of our time is the codec rather than V8 allocating the result.
//
// A floor is not a codec: it checks nothing, knows its input's layout in advance and
// would read past the end of a short buffer. Never use one outside the bench.
import type { ChunksCase, DecodeCase, EncodeCase } from './types.js';

/**
 * MetadataResponse v6 decoded to the very objects our codec returns (same keys, same
 * order, same defaults for fields v6 lacks), with no bounds, length or null checks and
 * no error paths: what is left is reading the numbers and allocating 1,000 partition
 * objects and their three replica lists.
 */
export function metadataV6Floor(): DecodeCase {
  return { version: 6, async: false, decode: decodeMetadataV6Unchecked, normalize: (v) => v };
}

/**
 * The floor above plus every input check our decoder makes: each read within the bytes,
 * array and string lengths neither negative (where null is not allowed) nor longer than
 * the bytes left, nothing left over at the end. What it still leaves out is the error's
 * detail (which field, which element), which a codec pays for on the good path too: ours
 * keeps the field being read and a try per struct. This row ÷ the floor is the price of
 * the checks themselves; metadataV6DetailedFloor adds the error detail.
 */
export function metadataV6CheckedFloor(): DecodeCase {
  return { version: 6, async: false, decode: decodeMetadataV6Checked, normalize: (v) => v };
}

/** One buffer holding a request: allocate it and copy every chunk of the zero-copy encoding in. */
export function oneBufferFloor(chunks: ChunksCase): EncodeCase {
  const parts = chunks.encode();
  const size = parts.reduce((n, c) => n + c.byteLength, 0);
  return {
    version: chunks.version,
    async: false,
    encode: () => {
      const out = Buffer.allocUnsafe(size);
      let at = 0;
      for (const part of parts) {
        out.set(part, at);
        at += part.byteLength;
      }
      return out;
    },
  };
}

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
const NO_OPERATIONS = -2147483648;

function decodeMetadataV6Unchecked(bytes: Buffer) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;
  const int32 = (): number => {
    const value = view.getInt32(pos);
    pos += 4;
    return value;
  };
  const string = (): string | null => {
    const length = view.getInt16(pos);
    pos += 2;
    if (length < 0) return null;
    pos += length;
    return bytes.toString('utf8', pos - length, pos);
  };
  const throttleTimeMs = int32();
  const brokers = new Array(int32());
  for (let b = 0; b < brokers.length; b++) {
    const nodeId = int32();
    const host = string();
    const port = int32();
    const rack = string();
    brokers[b] = { nodeId, host, port, rack };
  }
  const clusterId = string();
  const controllerId = int32();
  const topics = new Array(int32());
  for (let t = 0; t < topics.length; t++) {
    const errorCode = view.getInt16(pos);
    pos += 2;
    const name = string();
    const isInternal = bytes[pos++] !== 0;
    const partitions = new Array(int32());
    for (let p = 0; p < partitions.length; p++) {
      const partitionErrorCode = view.getInt16(pos);
      const partitionIndex = view.getInt32(pos + 2);
      const leaderId = view.getInt32(pos + 6);
      pos += 10;
      // The position stays a local of this loop (a closure over it would cost a context slot per access).
      let length = view.getInt32(pos);
      const replicaNodes = int32List(view, pos + 4, length);
      pos += 4 + 4 * length;
      length = view.getInt32(pos);
      const isrNodes = int32List(view, pos + 4, length);
      pos += 4 + 4 * length;
      length = view.getInt32(pos);
      const offlineReplicas = int32List(view, pos + 4, length);
      pos += 4 + 4 * length;
      partitions[p] = { errorCode: partitionErrorCode, partitionIndex, leaderId, leaderEpoch: -1, replicaNodes, isrNodes, offlineReplicas };
    }
    topics[t] = { errorCode, name, topicId: ZERO_UUID, isInternal, partitions, topicAuthorizedOperations: NO_OPERATIONS };
  }
  return { throttleTimeMs, brokers, clusterId, controllerId, topics, clusterAuthorizedOperations: NO_OPERATIONS, errorCode: 0 };
}

function int32List(view: DataView, at: number, length: number): number[] {
  if (length === 3) return [view.getInt32(at), view.getInt32(at + 4), view.getInt32(at + 8)];
  if (length === 2) return [view.getInt32(at), view.getInt32(at + 4)];
  const list = new Array<number>(length);
  for (let i = 0; i < length; i++) list[i] = view.getInt32(at + 4 * i);
  return list;
}

class FloorDecodeError extends Error {}

function tooShort(): never {
  throw new FloorDecodeError('input too short');
}

function badLength(): never {
  throw new FloorDecodeError('invalid length');
}

// The same walk as decodeMetadataV6Unchecked, each read preceded by its check.
function decodeMetadataV6Checked(bytes: Buffer) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.byteLength;
  let pos = 0;
  const int32 = (): number => {
    if (pos + 4 > end) tooShort();
    const value = view.getInt32(pos);
    pos += 4;
    return value;
  };
  const string = (nullable: boolean): string | null => {
    if (pos + 2 > end) tooShort();
    const length = view.getInt16(pos);
    pos += 2;
    if (length < 0) return nullable ? null : badLength();
    if (pos + length > end) tooShort();
    pos += length;
    return bytes.toString('utf8', pos - length, pos);
  };
  const arrayLength = (): number => {
    const length = int32();
    if (length < 0 || length > end - pos) badLength();
    return length;
  };
  const throttleTimeMs = int32();
  const brokers = new Array(arrayLength());
  for (let b = 0; b < brokers.length; b++) {
    const nodeId = int32();
    const host = string(false);
    const port = int32();
    const rack = string(true);
    brokers[b] = { nodeId, host, port, rack };
  }
  const clusterId = string(true);
  const controllerId = int32();
  const topics = new Array(arrayLength());
  for (let t = 0; t < topics.length; t++) {
    if (pos + 2 > end) tooShort();
    const errorCode = view.getInt16(pos);
    pos += 2;
    const name = string(false);
    if (pos + 1 > end) tooShort();
    const isInternal = bytes[pos++] !== 0;
    const partitions = new Array(arrayLength());
    for (let p = 0; p < partitions.length; p++) {
      if (pos + 14 > end) tooShort();
      const partitionErrorCode = view.getInt16(pos);
      const partitionIndex = view.getInt32(pos + 2);
      const leaderId = view.getInt32(pos + 6);
      pos += 10;
      let length = view.getInt32(pos);
      if (length < 0 || pos + 4 + 4 * length > end) badLength();
      const replicaNodes = int32List(view, pos + 4, length);
      pos += 4 + 4 * length;
      if (pos + 4 > end) tooShort();
      length = view.getInt32(pos);
      if (length < 0 || pos + 4 + 4 * length > end) badLength();
      const isrNodes = int32List(view, pos + 4, length);
      pos += 4 + 4 * length;
      if (pos + 4 > end) tooShort();
      length = view.getInt32(pos);
      if (length < 0 || pos + 4 + 4 * length > end) badLength();
      const offlineReplicas = int32List(view, pos + 4, length);
      pos += 4 + 4 * length;
      partitions[p] = { errorCode: partitionErrorCode, partitionIndex, leaderId, leaderEpoch: -1, replicaNodes, isrNodes, offlineReplicas };
    }
    topics[t] = { errorCode, name, topicId: ZERO_UUID, isInternal, partitions, topicAuthorizedOperations: NO_OPERATIONS };
  }
  if (pos !== end) badLength();
  return { throttleTimeMs, brokers, clusterId, controllerId, topics, clusterAuthorizedOperations: NO_OPERATIONS, errorCode: 0 };
}

/**
 * The checked floor plus the error detail our decoders owe (docs/DESIGN.md §3): a failed read
 * names its field path, e.g. `topics[3].partitions[7].isrNodes`. The path is kept as cheaply as
 * we know how: one string constant per field and one index per array level, in locals of one
 * function, the path built only when something fails.
 */
export function metadataV6DetailedFloor(): DecodeCase {
  return { version: 6, async: false, decode: decodeMetadataV6Detailed, normalize: (v) => v };
}

function decodeMetadataV6Detailed(bytes: Buffer) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.byteLength;
  let pos = 0;
  let at = '';
  let i = -1;
  let topicAt = '';
  let j = -1;
  let partitionAt = '';
  const int32 = (): number => {
    if (pos + 4 > end) tooShort();
    const value = view.getInt32(pos);
    pos += 4;
    return value;
  };
  const string = (nullable: boolean): string | null => {
    if (pos + 2 > end) tooShort();
    const length = view.getInt16(pos);
    pos += 2;
    if (length < 0) return nullable ? null : badLength();
    if (pos + length > end) tooShort();
    pos += length;
    return bytes.toString('utf8', pos - length, pos);
  };
  const arrayLength = (): number => {
    const length = int32();
    if (length < 0 || length > end - pos) badLength();
    return length;
  };
  try {
    at = 'throttleTimeMs';
    const throttleTimeMs = int32();
    at = 'brokers';
    const brokers = new Array(arrayLength());
    for (i = 0; i < brokers.length; i++) {
      topicAt = 'nodeId';
      const nodeId = int32();
      topicAt = 'host';
      const host = string(false);
      topicAt = 'port';
      const port = int32();
      topicAt = 'rack';
      const rack = string(true);
      brokers[i] = { nodeId, host, port, rack };
    }
    i = -1;
    at = 'clusterId';
    const clusterId = string(true);
    at = 'controllerId';
    const controllerId = int32();
    at = 'topics';
    const topics = new Array(arrayLength());
    for (i = 0; i < topics.length; i++) {
      topicAt = 'errorCode';
      if (pos + 2 > end) tooShort();
      const errorCode = view.getInt16(pos);
      pos += 2;
      topicAt = 'name';
      const name = string(false);
      topicAt = 'isInternal';
      if (pos + 1 > end) tooShort();
      const isInternal = bytes[pos++] !== 0;
      topicAt = 'partitions';
      const partitions = new Array(arrayLength());
      for (j = 0; j < partitions.length; j++) {
        partitionAt = 'errorCode';
        if (pos + 14 > end) tooShort();
        const partitionErrorCode = view.getInt16(pos);
        const partitionIndex = view.getInt32(pos + 2);
        const leaderId = view.getInt32(pos + 6);
        pos += 10;
        partitionAt = 'replicaNodes';
        let length = view.getInt32(pos);
        if (length < 0 || pos + 4 + 4 * length > end) badLength();
        const replicaNodes = int32List(view, pos + 4, length);
        pos += 4 + 4 * length;
        partitionAt = 'isrNodes';
        if (pos + 4 > end) tooShort();
        length = view.getInt32(pos);
        if (length < 0 || pos + 4 + 4 * length > end) badLength();
        const isrNodes = int32List(view, pos + 4, length);
        pos += 4 + 4 * length;
        partitionAt = 'offlineReplicas';
        if (pos + 4 > end) tooShort();
        length = view.getInt32(pos);
        if (length < 0 || pos + 4 + 4 * length > end) badLength();
        const offlineReplicas = int32List(view, pos + 4, length);
        pos += 4 + 4 * length;
        partitions[j] = { errorCode: partitionErrorCode, partitionIndex, leaderId, leaderEpoch: -1, replicaNodes, isrNodes, offlineReplicas };
      }
      j = -1;
      topics[i] = { errorCode, name, topicId: ZERO_UUID, isInternal, partitions, topicAuthorizedOperations: NO_OPERATIONS };
    }
    i = -1;
    at = '';
    if (pos !== end) badLength();
    return { throttleTimeMs, brokers, clusterId, controllerId, topics, clusterAuthorizedOperations: NO_OPERATIONS, errorCode: 0 };
  } catch (error) {
    const element = i < 0 ? '' : `[${i}].${topicAt}` + (j < 0 ? '' : `[${j}].${partitionAt}`);
    throw new FloorDecodeError(`${at}${element}: ${(error as Error).message}`);
  }
}

/**
 * The error-path floor's work in our decoder's layout: one function per struct (response,
 * broker, topic, partition), each with its own `try` and field being read, elements read in
 * their parent's loop by a direct call, the position passed from one function to the next in
 * a cursor object. Within a function the position is a local and every read is written out by
 * hand (a partition's three replica lists included), so no shared read method is left for V8
 * to inline; strings, 23 of them per response, go through one helper on the cursor. This is
 * as fast as we know how to make a function per struct: its ratio to the one-function floors
 * is the price of the layout itself, ours ÷ this row the price of reading through `Reader`.
 */
export function metadataV6PerStructFloor(): DecodeCase {
  return {
    version: 6,
    async: false,
    decode: (bytes: Buffer) => readFloorResponse(new FloorCursor(bytes)),
    normalize: (v) => v,
  };
}

class FloorCursor {
  readonly bytes: Buffer;
  readonly view: DataView;
  readonly end: number;
  pos = 0;
  constructor(bytes: Buffer) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.end = bytes.byteLength;
  }
}

/** A failure with the field path below the function that caught it. */
class FloorPathError extends FloorDecodeError {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
  }
}

function within(error: unknown, segment: string): FloorPathError {
  if (error instanceof FloorPathError) return new FloorPathError(`${segment}.${error.path}`, error.reason);
  return new FloorPathError(segment, (error as Error).message);
}

function cursorString(c: FloorCursor, nullable: boolean): string | null {
  const { view, end } = c;
  let pos = c.pos;
  if (pos + 2 > end) tooShort();
  const length = view.getInt16(pos);
  pos += 2;
  if (length < 0) {
    c.pos = pos;
    return nullable ? null : badLength();
  }
  if (pos + length > end) tooShort();
  c.pos = pos + length;
  return c.bytes.toString('utf8', pos, pos + length);
}

function cursorArrayLength(c: FloorCursor): number {
  const pos = c.pos;
  if (pos + 4 > c.end) tooShort();
  const length = c.view.getInt32(pos);
  c.pos = pos + 4;
  if (length < 0 || length > c.end - c.pos) badLength();
  return length;
}

function readFloorResponse(c: FloorCursor) {
  let at = 'throttleTimeMs';
  let element = -1;
  try {
    if (c.pos + 4 > c.end) tooShort();
    const throttleTimeMs = c.view.getInt32(c.pos);
    c.pos += 4;
    at = 'brokers';
    const brokers = new Array(cursorArrayLength(c));
    for (element = 0; element < brokers.length; element++) brokers[element] = readFloorBroker(c);
    element = -1;
    at = 'clusterId';
    const clusterId = cursorString(c, true);
    at = 'controllerId';
    if (c.pos + 4 > c.end) tooShort();
    const controllerId = c.view.getInt32(c.pos);
    c.pos += 4;
    at = 'topics';
    const topics = new Array(cursorArrayLength(c));
    for (element = 0; element < topics.length; element++) topics[element] = readFloorTopic(c);
    element = -1;
    at = '';
    if (c.pos !== c.end) badLength();
    return { throttleTimeMs, brokers, clusterId, controllerId, topics, clusterAuthorizedOperations: NO_OPERATIONS, errorCode: 0 };
  } catch (error) {
    throw within(error, element < 0 ? at : `${at}[${element}]`);
  }
}

function readFloorBroker(c: FloorCursor) {
  let at = 'nodeId';
  try {
    if (c.pos + 4 > c.end) tooShort();
    const nodeId = c.view.getInt32(c.pos);
    c.pos += 4;
    at = 'host';
    const host = cursorString(c, false);
    at = 'port';
    if (c.pos + 4 > c.end) tooShort();
    const port = c.view.getInt32(c.pos);
    c.pos += 4;
    at = 'rack';
    const rack = cursorString(c, true);
    return { nodeId, host, port, rack };
  } catch (error) {
    throw within(error, at);
  }
}

function readFloorTopic(c: FloorCursor) {
  let at = 'errorCode';
  let element = -1;
  try {
    if (c.pos + 2 > c.end) tooShort();
    const errorCode = c.view.getInt16(c.pos);
    c.pos += 2;
    at = 'name';
    const name = cursorString(c, false);
    at = 'isInternal';
    if (c.pos + 1 > c.end) tooShort();
    const isInternal = c.bytes[c.pos++] !== 0;
    at = 'partitions';
    const partitions = new Array(cursorArrayLength(c));
    for (element = 0; element < partitions.length; element++) partitions[element] = readFloorPartition(c);
    element = -1;
    return { errorCode, name, topicId: ZERO_UUID, isInternal, partitions, topicAuthorizedOperations: NO_OPERATIONS };
  } catch (error) {
    throw within(error, element < 0 ? at : `${at}[${element}]`);
  }
}

// The hot function: 1,000 calls per response.
function readFloorPartition(c: FloorCursor) {
  const view = c.view;
  const end = c.end;
  let pos = c.pos;
  let at = 'errorCode';
  try {
    if (pos + 10 > end) tooShort();
    const errorCode = view.getInt16(pos);
    const partitionIndex = view.getInt32(pos + 2);
    const leaderId = view.getInt32(pos + 6);
    pos += 10;
    at = 'replicaNodes';
    if (pos + 4 > end) tooShort();
    let length = view.getInt32(pos);
    pos += 4;
    if (length < 0 || pos + 4 * length > end) badLength();
    const replicaNodes = int32List(view, pos, length);
    pos += 4 * length;
    at = 'isrNodes';
    if (pos + 4 > end) tooShort();
    length = view.getInt32(pos);
    pos += 4;
    if (length < 0 || pos + 4 * length > end) badLength();
    const isrNodes = int32List(view, pos, length);
    pos += 4 * length;
    at = 'offlineReplicas';
    if (pos + 4 > end) tooShort();
    length = view.getInt32(pos);
    pos += 4;
    if (length < 0 || pos + 4 * length > end) badLength();
    const offlineReplicas = int32List(view, pos, length);
    c.pos = pos + 4 * length;
    return { errorCode, partitionIndex, leaderId, leaderEpoch: -1, replicaNodes, isrNodes, offlineReplicas };
  } catch (error) {
    throw within(error, at);
  }
}
