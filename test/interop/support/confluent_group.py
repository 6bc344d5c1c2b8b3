"""confluent-kafka-python against a kipgen broker: AdminClient creates a topic,
a Producer fills it, a Consumer in a group reads everything and commits
synchronously, reads the commits back with committed(), closes (LeaveGroup);
a second Consumer of the same group then finds nothing left to read.
Prints one JSON line with what happened."""
import json
import sys
import time

import confluent_kafka
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap, topic, group = sys.argv[1], sys.argv[2], sys.argv[3]
client_id = "confluent-python-interop"
errors = []

admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": client_id})
for name, future in admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)]).items():
    future.result(30)
again = admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])[topic]
try:
    again.result(30)
    errors.append("creating the topic twice succeeded")
except confluent_kafka.KafkaException as e:
    exists_error = e.args[0].name()

producer = Producer({"bootstrap.servers": bootstrap, "client.id": client_id})
for i in range(30):
    producer.produce(topic, key=f"k{i}", value=f"v{i}", partition=i % 3)
producer.flush(30)


def consumer():
    return Consumer({
        "bootstrap.servers": bootstrap,
        "client.id": client_id,
        "group.id": group,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": 10000,
    })


first = consumer()
first.subscribe([topic])
values = []
deadline = time.time() + 40
while len(values) < 30 and time.time() < deadline:
    msg = first.poll(0.5)
    if msg is None:
        continue
    if msg.error():
        errors.append(str(msg.error()))
        continue
    values.append(msg.value().decode())
first.commit(asynchronous=False)
committed = first.committed([TopicPartition(topic, p) for p in range(3)], timeout=10)
assignment = sorted(tp.partition for tp in first.assignment())
first.close()

second = consumer()
second.subscribe([topic])
later = []
deadline = time.time() + 6
while time.time() < deadline:
    msg = second.poll(0.5)
    if msg is not None and not msg.error():
        later.append(msg.value().decode())
second.close()

print(json.dumps({
    "confluent_kafka": confluent_kafka.version()[0],
    "librdkafka": confluent_kafka.libversion()[0],
    "exists_error": exists_error,
    "values": values,
    "assignment": assignment,
    "committed": [[tp.partition, tp.offset] for tp in committed],
    "later": later,
    "errors": errors,
}))
