// @kipgen/codecs installed with `npm install --omit=optional`: no compression
// libraries and no native CRC-32C binary. It must import and work: CRC-32C
// falls back to JavaScript, gzip still works, the other codecs name their package.
import { EndTxnRequest } from '@kipgen/codecs';
import { CompressionUnavailableError, crc32cImplementation, decodeRecordBatch, encodeRecordBatch } from '@kipgen/codecs/runtime';

const roundTrip = EndTxnRequest.toJson(EndTxnRequest.decode(EndTxnRequest.encode(EndTxnRequest.create({ transactionalId: 'tx', producerId: 7n }), 4), 4), 4);
const codecs = ['none', 'gzip', 'snappy', 'lz4', 'zstd'].map((compression) => {
  try {
    const batch = decodeRecordBatch(encodeRecordBatch({ compression, records: [{ value: Buffer.from('v'.repeat(300)) }] }));
    return `${compression}:${batch.records[0].value.length}`;
  } catch (e) {
    return e instanceof CompressionUnavailableError ? `${compression}:needs ${e.packageName}` : `${compression}: wrong error ${e}`;
  }
});
console.log(JSON.stringify({ crc32c: crc32cImplementation(), roundTrip, codecs }));
