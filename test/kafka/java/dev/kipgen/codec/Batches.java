package dev.kipgen.codec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Utils;

import java.nio.ByteBuffer;
import java.util.Base64;

/**
 * Record batches as Kafka 4.4 writes and reads them (clients' org.apache.kafka.common.record.internal: MemoryRecords, MemoryRecordsBuilder,
 * DefaultRecordBatch). Our JSON for a batch to write:
 * <pre>
 * {"compression":"none|gzip|snappy|lz4|zstd","baseOffset":"0","partitionLeaderEpoch":-1,
 *  "producerId":"-1","producerEpoch":-1,"baseSequence":-1,"transactional":false,
 *  "records":[{"timestamp":"…","key":base64|null,"value":base64|null,"headers":[{"key":…,"value":base64|null}]}]}
 * {"control":"COMMIT|ABORT","coordinatorEpoch":5,"timestamp":"…","producerId":"…","producerEpoch":1,
 *  "baseOffset":"0","partitionLeaderEpoch":-1}
 * </pre>
 * int64 values are decimal strings both ways.
 */
final class Batches {
    static byte[] write(JsonNode item) {
        MemoryRecords records;
        if (item.has("control")) {
            ControlRecordType type = ControlRecordType.valueOf(item.path("control").asText());
            records = MemoryRecords.withEndTransactionMarker(
                int64(item, "baseOffset"), int64(item, "timestamp"), item.path("partitionLeaderEpoch").asInt(),
                int64(item, "producerId"), (short) item.path("producerEpoch").asInt(),
                new EndTransactionMarker(type, item.path("coordinatorEpoch").asInt()));
        } else {
            JsonNode list = item.path("records");
            SimpleRecord[] simple = new SimpleRecord[list.size()];
            for (int i = 0; i < simple.length; i++) {
                JsonNode r = list.get(i);
                JsonNode hs = r.path("headers");
                Header[] headers = new Header[hs.size()];
                for (int h = 0; h < headers.length; h++) headers[h] = new RecordHeader(hs.get(h).path("key").asText(), bytes(hs.get(h).get("value")));
                simple[i] = new SimpleRecord(int64(r, "timestamp"), bytes(r.get("key")), bytes(r.get("value")), headers);
            }
            records = MemoryRecords.withRecords(RecordBatch.CURRENT_MAGIC_VALUE, int64(item, "baseOffset"),
                Compression.of(item.path("compression").asText()).build(), TimestampType.CREATE_TIME,
                int64(item, "producerId"), (short) item.path("producerEpoch").asInt(), item.path("baseSequence").asInt(),
                item.path("partitionLeaderEpoch").asInt(), item.path("transactional").asBoolean(), simple);
        }
        return Utils.toArray(records.buffer());
    }

    /** Every batch in `bytes`, CRC-checked (DefaultRecordBatch.ensureValid), with its records as Kafka iterates them. */
    static ArrayNode read(byte[] bytes) {
        MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(bytes));
        ArrayNode out = CodecServer.NODES.arrayNode();
        int used = 0;
        for (MutableRecordBatch batch : records.batches()) {
            batch.ensureValid();
            used += batch.sizeInBytes();
            ObjectNode b = out.addObject();
            b.put("baseOffset", Long.toString(batch.baseOffset()));
            b.put("lastOffset", Long.toString(batch.lastOffset()));
            b.put("partitionLeaderEpoch", batch.partitionLeaderEpoch());
            b.put("magic", batch.magic());
            b.put("compression", batch.compressionType().name);
            b.put("timestampType", batch.timestampType().name);
            b.put("maxTimestamp", Long.toString(batch.maxTimestamp()));
            b.put("transactional", batch.isTransactional());
            b.put("control", batch.isControlBatch());
            b.put("producerId", Long.toString(batch.producerId()));
            b.put("producerEpoch", batch.producerEpoch());
            b.put("baseSequence", batch.baseSequence());
            b.put("lastSequence", batch.lastSequence());
            b.put("count", batch.countOrNull());
            b.put("sizeInBytes", batch.sizeInBytes());
            ArrayNode list = b.putArray("records");
            for (Record record : batch) {
                ObjectNode r = list.addObject();
                r.put("offset", Long.toString(record.offset()));
                r.put("timestamp", Long.toString(record.timestamp()));
                r.put("key", base64(record.key()));
                r.put("value", base64(record.value()));
                ArrayNode hs = r.putArray("headers");
                for (Header h : record.headers()) {
                    ObjectNode header = hs.addObject();
                    header.put("key", h.key());
                    header.put("value", h.value() == null ? null : Base64.getEncoder().encodeToString(h.value()));
                }
                if (batch.isControlBatch()) {
                    ControlRecordType type = ControlRecordType.parse(record.key());
                    r.put("controlType", type.name());
                    if (type == ControlRecordType.COMMIT || type == ControlRecordType.ABORT) {
                        r.put("coordinatorEpoch", EndTransactionMarker.deserialize(record).coordinatorEpoch());
                    }
                }
            }
        }
        if (used != bytes.length) throw new IllegalStateException("Kafka's batches cover " + used + " of " + bytes.length + " bytes");
        return out;
    }

    private static long int64(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null) throw new IllegalArgumentException("batch field " + field + " is missing");
        return Long.parseLong(value.asText());
    }

    private static byte[] bytes(JsonNode node) {
        return node == null || node.isNull() ? null : Base64.getDecoder().decode(node.asText());
    }

    private static String base64(ByteBuffer buffer) {
        return buffer == null ? null : Base64.getEncoder().encodeToString(Utils.toArray(buffer));
    }

    private Batches() {
    }
}
