package dev.kipgen.codec;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Readable;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * Kafka 4.4's generated codec of one message, found by name through reflection:
 * the request/response/header classes of kafka-clients (org.apache.kafka.common.message,
 * `<Name>Data` and `<Name>DataJsonConverter`) or a coordinator's record classes
 * (`<Name>` and `<Name>JsonConverter` in the group, share and transaction coordinators'
 * `generated` packages). Kafka's generator (generator/src/main/java/org/apache/kafka/message/
 * MessageDataGenerator.java, JsonConverterGenerator.java) gives every one of them the same
 * shape: a `(Readable, short)` constructor, `size`/`write` of the Message interface, and a
 * converter with static `read(JsonNode, short)` and `write(<class>, short)`.
 */
final class Codecs {
    private static final String[] COORDINATOR_PACKAGES = {
        "org.apache.kafka.coordinator.group.generated.",
        "org.apache.kafka.coordinator.share.generated.",
        "org.apache.kafka.coordinator.transaction.generated.",
    };

    private static final Map<String, Codec> CACHE = new HashMap<>();

    /** One message's class and converter, with the versions its class declares. */
    static final class Codec {
        final String name;
        final Constructor<?> fromBytes;
        final Method jsonRead;
        final Method jsonWrite;
        final short lowest;
        final short highest;

        Codec(String name, Class<?> data, Class<?> converter) throws ReflectiveOperationException {
            this.name = name;
            this.fromBytes = data.getConstructor(Readable.class, short.class);
            this.jsonRead = converter.getMethod("read", JsonNode.class, short.class);
            this.jsonWrite = converter.getMethod("write", data, short.class);
            Message empty = (Message) data.getConstructor().newInstance();
            this.lowest = empty.lowestSupportedVersion();
            this.highest = empty.highestSupportedVersion();
        }

        /** Kafka reads `bytes`; returns the message and how many bytes it left unread. */
        Message read(byte[] bytes, short version) throws Exception {
            ByteBuffer buffer = ByteBuffer.wrap(bytes);
            Message message = (Message) unwrap(() -> fromBytes.newInstance(new ByteBufferAccessor(buffer), version));
            if (buffer.hasRemaining()) {
                throw new IllegalStateException(name + " v" + version + ": Kafka read " + buffer.position() + " of " + bytes.length + " bytes and left " + buffer.remaining());
            }
            return message;
        }

        Message fromJson(JsonNode json, short version) throws Exception {
            return (Message) unwrap(() -> jsonRead.invoke(null, json, version));
        }

        JsonNode toJson(Message message, short version) throws Exception {
            return (JsonNode) unwrap(() -> jsonWrite.invoke(null, message, version));
        }
    }

    /** The codec of `name`, or null when Kafka 4.4 has no class of that name. */
    static synchronized Codec of(String name) throws ReflectiveOperationException {
        if (CACHE.containsKey(name)) return CACHE.get(name);
        Codec codec = null;
        Class<?> data = load("org.apache.kafka.common.message." + name + "Data");
        if (data != null) {
            codec = new Codec(name, data, Class.forName("org.apache.kafka.common.message." + name + "DataJsonConverter"));
        } else if ((data = load("org.apache.kafka.common.message." + name)) != null) {
            // "data" specs (ConsumerProtocolSubscription, ConsumerProtocolAssignment): Kafka names their classes without the Data suffix.
            codec = new Codec(name, data, Class.forName("org.apache.kafka.common.message." + name + "JsonConverter"));
        } else {
            for (String pkg : COORDINATOR_PACKAGES) {
                Class<?> record = load(pkg + name);
                if (record != null) {
                    codec = new Codec(name, record, Class.forName(pkg + name + "JsonConverter"));
                    break;
                }
            }
        }
        CACHE.put(name, codec);
        return codec;
    }

    /** Kafka's own two passes: size into the cache, then write (as MessageUtil.toByteBufferAccessor does). */
    static byte[] serialize(Message message, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = message.size(cache, version);
        ByteBuffer buffer = ByteBuffer.allocate(size);
        message.write(new ByteBufferAccessor(buffer), cache, version);
        if (buffer.hasRemaining()) throw new IllegalStateException("size() said " + size + " bytes but write() wrote " + buffer.position());
        return buffer.array();
    }

    private static Class<?> load(String className) {
        try {
            return Class.forName(className);
        } catch (ClassNotFoundException e) {
            return null;
        }
    }

    @FunctionalInterface
    private interface Call {
        Object call() throws Exception;
    }

    /** The exception the generated code threw, not reflection's wrapper. */
    private static Object unwrap(Call call) throws Exception {
        try {
            return call.call();
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception) throw (Exception) cause;
            throw new RuntimeException(cause);
        }
    }

    private Codecs() {
    }
}
