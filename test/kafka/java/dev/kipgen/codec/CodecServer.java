package dev.kipgen.codec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;

import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.MessageUtil;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Iterator;
import java.util.Map;

/**
 * Kafka 4.4's generated message codecs and record-batch code as a long-lived process for
 * test/kafka/conformance.test.ts: one JSON request per stdin line, one JSON answer per stdout
 * line, each request a whole batch of messages of one name and version so that the pipe is
 * not what limits the run.
 *
 * <pre>
 * {"op":"versions","names":[...]}                       → {"versions":{"Name":[lowest,highest] | null}}
 * {"op":"read","name":N,"version":V,"items":[base64]}   → {"results":[{"bytes":base64,"json":…} | {"error":…}]}
 * {"op":"fromJson","name":N,"version":V,"items":[json]} → {"results":[{"bytes":base64,"json":…} | {"error":…}]}
 * {"op":"downgrade","name":N,"from":V,"to":W,"items":[json]} → {"results":[{"bytes":base64} | {"error":…}]}
 * {"op":"logRecord","name":N,"version":V,"items":[json]} → {"results":[{"bytes":base64} | {"error":…}]}  (coordinator records)
 * {"op":"writeBatches","items":[batch]}                 → {"results":[{"bytes":base64} | {"error":…}]}   (see Batches)
 * {"op":"readBatches","items":[base64]}                 → {"results":[{"batches":[…]} | {"error":…}]}
 * </pre>
 *
 * "read" is the bytes → Kafka direction: `new XData(ByteBufferAccessor, version)` (every byte
 * must be used), written back with Kafka's size/write and printed with its JsonConverter;
 * `unknownTags` counts the top-level tagged fields Kafka did not know and kept.
 * "fromJson" is JSON → Kafka: `XDataJsonConverter.read(json, version)`, then the same.
 *
 * Every answer but a fatal one has `busyNanos`, the time this process spent on the request.
 *
 * JSON numbers: Kafka's converter writes every int64 as a Jackson LongNode; they are sent
 * as decimal strings because JavaScript's JSON.parse cannot hold them (none of the specs
 * under test has a uint32, the only other type Kafka writes as a LongNode). Incoming int64
 * values must be JSON numbers: MessageUtil.jsonNodeToLong refuses strings.
 */
public final class CodecServer {
    static final ObjectMapper MAPPER = new ObjectMapper();
    static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 20);
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 20);
        String line;
        while ((line = in.readLine()) != null) {
            ObjectNode answer;
            long began = System.nanoTime();
            try {
                answer = handle(MAPPER.readTree(line));
                answer.put("busyNanos", System.nanoTime() - began);
            } catch (Exception e) {
                answer = NODES.objectNode();
                answer.put("fatal", describe(e));
            }
            out.write(MAPPER.writeValueAsString(answer));
            out.write('\n');
            out.flush();
        }
    }

    static ObjectNode handle(JsonNode request) throws Exception {
        String op = request.path("op").asText();
        ObjectNode answer = NODES.objectNode();
        switch (op) {
            case "versions": {
                ObjectNode versions = answer.putObject("versions");
                for (JsonNode name : request.path("names")) {
                    Codecs.Codec codec = Codecs.of(name.asText());
                    if (codec == null) versions.putNull(name.asText());
                    else versions.putArray(name.asText()).add(codec.lowest).add(codec.highest);
                }
                return answer;
            }
            case "read":
            case "fromJson": {
                String name = request.path("name").asText();
                Codecs.Codec codec = Codecs.of(name);
                if (codec == null) throw new IllegalArgumentException("Kafka 4.4 has no generated class for " + name);
                short version = (short) request.path("version").asInt();
                ArrayNode results = answer.putArray("results");
                for (JsonNode item : request.path("items")) {
                    ObjectNode result = results.addObject();
                    try {
                        Message message = op.equals("read")
                            ? codec.read(Base64.getDecoder().decode(item.asText()), version)
                            : codec.fromJson(item, version);
                        result.put("bytes", Base64.getEncoder().encodeToString(Codecs.serialize(message, version)));
                        result.set("json", int64AsText(codec.toJson(message, version)));
                        result.put("unknownTags", message.unknownTaggedFields().size());
                    } catch (Exception e) {
                        result.put("error", describe(e));
                    }
                }
                return answer;
            }
            case "downgrade": {
                // JSON read at one version, written at another: what Kafka's write() does with fields the
                // lower version lacks (ignorable or not) and with nulls it cannot carry.
                String name = request.path("name").asText();
                Codecs.Codec codec = Codecs.of(name);
                if (codec == null) throw new IllegalArgumentException("Kafka 4.4 has no generated class for " + name);
                short from = (short) request.path("from").asInt();
                short to = (short) request.path("to").asInt();
                ArrayNode results = answer.putArray("results");
                for (JsonNode item : request.path("items")) {
                    ObjectNode result = results.addObject();
                    try {
                        result.put("bytes", Base64.getEncoder().encodeToString(Codecs.serialize(codec.fromJson(item, from), to)));
                    } catch (Exception e) {
                        result.put("error", describe(e));
                    }
                }
                return answer;
            }
            case "logRecord": {
                // A coordinator record as its coordinator puts it in its log: a key after its int16 record type
                // (MessageUtil.toCoordinatorTypePrefixedBytes), a value after its int16 version (toVersionPrefixedBytes).
                String name = request.path("name").asText();
                Codecs.Codec codec = Codecs.of(name);
                if (codec == null) throw new IllegalArgumentException("Kafka 4.4 has no generated class for " + name);
                short version = (short) request.path("version").asInt();
                ArrayNode results = answer.putArray("results");
                for (JsonNode item : request.path("items")) {
                    ObjectNode result = results.addObject();
                    try {
                        Message message = codec.fromJson(item, version);
                        byte[] bytes = name.endsWith("Key")
                            ? MessageUtil.toCoordinatorTypePrefixedBytes((ApiMessage) message)
                            : MessageUtil.toVersionPrefixedBytes(version, message);
                        result.put("bytes", Base64.getEncoder().encodeToString(bytes));
                    } catch (Exception e) {
                        result.put("error", describe(e));
                    }
                }
                return answer;
            }
            case "writeBatches": {
                ArrayNode results = answer.putArray("results");
                for (JsonNode item : request.path("items")) {
                    ObjectNode result = results.addObject();
                    try {
                        result.put("bytes", Base64.getEncoder().encodeToString(Batches.write(item)));
                    } catch (Exception e) {
                        result.put("error", describe(e));
                    }
                }
                return answer;
            }
            case "readBatches": {
                ArrayNode results = answer.putArray("results");
                for (JsonNode item : request.path("items")) {
                    ObjectNode result = results.addObject();
                    try {
                        result.set("batches", Batches.read(Base64.getDecoder().decode(item.asText())));
                    } catch (Exception e) {
                        result.put("error", describe(e));
                    }
                }
                return answer;
            }
            default:
                throw new IllegalArgumentException("unknown op " + JsonNodeFactory.instance.textNode(op));
        }
    }

    /** Every LongNode of Kafka's JSON as a decimal string (see the class comment). */
    static JsonNode int64AsText(JsonNode node) {
        if (node.isLong()) return TextNode.valueOf(Long.toString(node.longValue()));
        if (node.isObject()) {
            ObjectNode object = (ObjectNode) node;
            for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> field = it.next();
                JsonNode converted = int64AsText(field.getValue());
                if (converted != field.getValue()) field.setValue(converted);
            }
        } else if (node.isArray()) {
            ArrayNode array = (ArrayNode) node;
            for (int i = 0; i < array.size(); i++) {
                JsonNode converted = int64AsText(array.get(i));
                if (converted != array.get(i)) array.set(i, converted);
            }
        }
        return node;
    }

    static String describe(Throwable e) {
        return e.getClass().getSimpleName() + ": " + e.getMessage();
    }

    private CodecServer() {
    }
}
