import type { Writer } from './writer.js';
import { sizeOfUnsignedVarint } from './sizes.js';

/** A tagged field this codec does not know, kept as raw bytes so that it survives a decode/encode round trip. */
export interface RawTaggedField {
  tag: number;
  data: Uint8Array;
}

/** Bytes the unknown tagged fields add to a tagged-field section (header and body of each). */
export function sizeOfRawTaggedFields(fields: readonly RawTaggedField[] | undefined): number {
  if (fields === undefined) return 0;
  let size = 0;
  for (const field of fields) {
    size += sizeOfUnsignedVarint(field.tag) + sizeOfUnsignedVarint(field.data.length) + field.data.length;
  }
  return size;
}

/** Size of a tagged-field section that holds only unknown fields: the count, then each field. */
export function sizeOfUnknownTaggedFields(fields: readonly RawTaggedField[] | undefined): number {
  return fields === undefined ? 1 : sizeOfUnsignedVarint(fields.length) + sizeOfRawTaggedFields(fields);
}

/**
 * Writes the unknown tagged fields whose tag is below `belowTag`, starting at
 * `next`, and returns the index of the first one not written. The generated
 * writers call it before each known tag so that the section stays in tag order,
 * as Kafka's RawTaggedFieldWriter does.
 */
export function writeRawTaggedFields(writer: Writer, fields: readonly RawTaggedField[] | undefined, next: number, belowTag: number): number {
  if (fields === undefined) return next;
  let i = next;
  for (; i < fields.length && fields[i]!.tag < belowTag; i++) {
    const field = fields[i]!;
    writer.unsignedVarint(field.tag);
    writer.unsignedVarint(field.data.length);
    writer.raw(field.data);
  }
  return i;
}

/** Writes a tagged-field section that holds only unknown fields (a struct with no known tags). */
export function writeUnknownTaggedFields(writer: Writer, fields: readonly RawTaggedField[] | undefined): void {
  // Nearly every struct has none: that case returns at once (this runs for every struct written).
  if (fields === undefined) {
    writer.unsignedVarint(0);
    return;
  }
  writer.unsignedVarint(fields.length);
  writeRawTaggedFields(writer, fields, 0, Infinity);
}
