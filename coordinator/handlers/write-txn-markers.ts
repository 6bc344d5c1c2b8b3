/** WriteTxnMarkers (broker to broker): append each marker to each listed local partition and apply it. */
import { WriteTxnMarkersResponse } from '../../generated/index.js';
import type { Handler } from '../broker-context.js';
import type { Cluster } from '../cluster.js';
import { ErrorCode } from '../errors.js';
import type { MarkerWriter } from '../txn/marker-writer.js';

export function writeTxnMarkersHandler(cluster: Cluster, writer: MarkerWriter): Handler {
  return async (req) => {
    const markers = [];
    for (const marker of req.markers) {
      const topics = [];
      for (const topic of marker.topics) {
        const partitions = [];
        const info = cluster.topicByName(topic.name);
        for (const partition of topic.partitionIndexes as number[]) {
          const errorCode =
            info === undefined || partition < 0 || partition >= info.partitions
              ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
              : await writer.write(topic.name, partition, {
                  producerId: marker.producerId,
                  producerEpoch: marker.producerEpoch,
                  commit: marker.transactionResult,
                  coordinatorEpoch: marker.coordinatorEpoch,
                });
          partitions.push({ partitionIndex: partition, errorCode });
        }
        topics.push({ name: topic.name, partitions });
      }
      markers.push({ producerId: marker.producerId, topics });
    }
    return WriteTxnMarkersResponse.create({ markers });
  };
}
