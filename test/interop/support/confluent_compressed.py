"""confluent-kafka-python (Debian's python3-confluent-kafka, on librdkafka):
one transactional producer per compression codec against a kipgen broker.
Codec number i (gzip, snappy, lz4, zstd) writes to partition i of TOPIC, in a
committed transaction: the records compress_records.json describes (keys,
values, headers as hex), with linger so that they share one batch.
Prints one JSON line. Usage: confluent_compressed.py BOOTSTRAP TOPIC RECORDS_JSON
"""
import json
import sys

import confluent_kafka
from confluent_kafka import Producer

bootstrap, topic, records_file = sys.argv[1], sys.argv[2], sys.argv[3]
with open(records_file) as f:
    records = json.load(f)
errors = []


def on_delivery(err, msg):
    if err is not None:
        errors.append(f"delivery to {msg.topic()}-{msg.partition()}: {err}")


def unhex(value):
    return None if value is None else bytes.fromhex(value)


for partition, codec in enumerate(["gzip", "snappy", "lz4", "zstd"]):
    producer = Producer({
        "bootstrap.servers": bootstrap,
        "client.id": "confluent-python-compressed",
        "transactional.id": f"confluent-python-{codec}",
        "compression.type": codec,
        "linger.ms": 500,
    })
    producer.init_transactions(20)
    producer.begin_transaction()
    for record in records:
        producer.produce(
            topic,
            key=unhex(record["key"]),
            value=unhex(record["value"]),
            partition=partition,
            headers=[(k, unhex(v)) for k, v in record["headers"]],
            on_delivery=on_delivery,
        )
    producer.commit_transaction(20)
    producer.flush(20)

print(json.dumps({"confluent_kafka": confluent_kafka.version()[0], "librdkafka": confluent_kafka.libversion()[0], "errors": errors}))
