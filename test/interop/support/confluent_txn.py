"""confluent-kafka-python (Debian's python3-confluent-kafka, on librdkafka):
a transactional producer against a kipgen broker. Commits a transaction
(with send_offsets_to_transaction), aborts one, commits another, and prints
one JSON line describing what it did. Usage: confluent_txn.py BOOTSTRAP TOPIC GROUP
"""
import json
import sys

import confluent_kafka
from confluent_kafka import Consumer, Producer, TopicPartition

bootstrap, topic, group = sys.argv[1], sys.argv[2], sys.argv[3]
errors = []


def on_delivery(err, msg):
    if err is not None:
        errors.append(f"delivery to {msg.topic()}-{msg.partition()}: {err}")


producer = Producer({
    "bootstrap.servers": bootstrap,
    "client.id": "confluent-python-interop",
    "transactional.id": "confluent-python-tx",
    "transaction.timeout.ms": 30000,
    "linger.ms": 5,
})
# Only for its group metadata (send_offsets_to_transaction); never subscribes.
consumer = Consumer({
    "bootstrap.servers": bootstrap,
    "client.id": "confluent-python-interop",
    "group.id": group,
    "enable.auto.commit": False,
})

producer.init_transactions(20)

producer.begin_transaction()
producer.produce(topic, key=b"py-k0", value=b"py-committed-0", partition=0, headers=[("h", b"\x00\xff"), ("n", None)], on_delivery=on_delivery)
producer.produce(topic, key=None, value=bytes(range(256)), partition=1, on_delivery=on_delivery)
producer.send_offsets_to_transaction([TopicPartition(topic, 0, 7)], consumer.consumer_group_metadata(), 20)
producer.commit_transaction(20)

producer.begin_transaction()
producer.produce(topic, key=b"py-kx", value=b"py-aborted-0", partition=0, on_delivery=on_delivery)
producer.produce(topic, key=b"py-ky", value=b"py-aborted-1", partition=1, on_delivery=on_delivery)
producer.flush(20)
producer.abort_transaction(20)

producer.begin_transaction()
producer.produce(topic, key=b"py-k2", value=b"py-committed-2", partition=0, on_delivery=on_delivery)
producer.commit_transaction(20)

consumer.close()
print(json.dumps({
    "confluent_kafka": confluent_kafka.version()[0],
    "librdkafka": confluent_kafka.libversion()[0],
    "errors": errors,
}))
