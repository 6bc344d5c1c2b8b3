/**
 * Reads entries of a jar (a zip file) with node:zlib alone: the central
 * directory at the end of the file lists every entry with its offset; each is
 * stored or deflated. Enough for Kafka's jars (no zip64, no encryption), so
 * that the schema check needs neither `jar` nor `unzip`.
 */
import * as fs from 'node:fs';
import { inflateRawSync } from 'node:zlib';

/** The entries of `jarPath` whose names `wanted` accepts, name → content. */
export function readJarEntries(jarPath: string, wanted: (name: string) => boolean): Map<string, Buffer> {
  const zip = fs.readFileSync(jarPath);
  // End of central directory: signature 0x06054b50 within the last 64 KiB + 22 bytes.
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 65_557); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error(`${jarPath}: not a zip file (no end of central directory)`);
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const out = new Map<string, Buffer>();
  for (let n = 0; n < count; n++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`${jarPath}: bad central directory entry at ${at}`);
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const localHeader = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    if (!wanted(name)) continue;
    const dataStart = localHeader + 30 + zip.readUInt16LE(localHeader + 26) + zip.readUInt16LE(localHeader + 28);
    const data = zip.subarray(dataStart, dataStart + compressedSize);
    if (method === 0) out.set(name, Buffer.from(data));
    else if (method === 8) out.set(name, inflateRawSync(data));
    else throw new Error(`${jarPath}: ${name} uses zip method ${method}, which this reader does not handle`);
  }
  return out;
}
