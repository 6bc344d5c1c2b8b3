// A codec round trip through the installed @kipgen/codecs, by package name only.
import { EndTxnRequest, MetadataRequest, apis, createMetadataRequestTopic } from '@kipgen/codecs';
import { DecodeError, Reader, crc32cImplementation, decodeRecordBatch, encodeRecordBatch } from '@kipgen/codecs/runtime';

const bytes = EndTxnRequest.encode(EndTxnRequest.create({ transactionalId: 'tx', producerId: 42n, producerEpoch: 3, committed: true }), 4);
const back = EndTxnRequest.decode(bytes, 4);
let error = '';
try {
  EndTxnRequest.decode(bytes.subarray(0, 5), 4);
} catch (e) {
  error = e instanceof DecodeError ? e.message : `wrong error: ${e}`;
}
const metadata = MetadataRequest.decode(MetadataRequest.encode(MetadataRequest.create({ topics: [createMetadataRequestTopic({ name: 'orders' })] }), 12), 12);
const codecs = ['gzip', 'snappy', 'lz4', 'zstd'].map((compression) => {
  const batch = decodeRecordBatch(encodeRecordBatch({ compression, records: [{ value: Buffer.from('v'.repeat(500)) }] }));
  return `${batch.compression}:${batch.records[0].value.length}`;
});
console.log(
  JSON.stringify({
    hex: Buffer.from(bytes).toString('hex'),
    json: EndTxnRequest.toJson(back, 4),
    api: apis.get(26).name,
    reader: typeof Reader,
    error,
    metadataTopics: metadata.topics,
    codecs,
    crc32c: crc32cImplementation().kind,
  }),
);
