"""One confluent-kafka-python (librdkafka) member of a consumer group, driven
by the test that started it: it subscribes with the given
partition.assignment.strategy and prints one JSON line per event on stdout
(assigned/revoked partitions as librdkafka reports them, each record read,
errors); a line "close" on stdin makes it commit, leave the group and exit."""
import json
import select
import sys

import confluent_kafka
from confluent_kafka import Consumer

bootstrap, topic, group, strategy = sys.argv[1:5]


def emit(**event):
    print(json.dumps(event), flush=True)


def partitions(tps):
    return sorted(tp.partition for tp in tps)


consumer = Consumer({
    "bootstrap.servers": bootstrap,
    "client.id": "confluent-python-member",
    "group.id": group,
    "auto.offset.reset": "earliest",
    "partition.assignment.strategy": strategy,
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 300,
    "fetch.wait.max.ms": 100,
    "auto.commit.interval.ms": 200,
})
emit(started=True, confluent_kafka=confluent_kafka.version()[0], librdkafka=confluent_kafka.libversion()[0])
# librdkafka assigns (eagerly or incrementally, by the protocol) after the callbacks return.
consumer.subscribe(
    [topic],
    on_assign=lambda c, tps: emit(assigned=partitions(tps)),
    on_revoke=lambda c, tps: emit(revoked=partitions(tps)),
    on_lost=lambda c, tps: emit(lost=partitions(tps)),
)
while True:
    readable, _, _ = select.select([sys.stdin], [], [], 0)
    if readable and sys.stdin.readline().strip() in ("close", ""):
        break
    msg = consumer.poll(0.1)
    if msg is None:
        continue
    if msg.error():
        emit(error=str(msg.error()))
        continue
    emit(record=[msg.partition(), msg.offset()])
consumer.close()
emit(closed=True)
