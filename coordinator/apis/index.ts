/**
 * Every API the broker serves, one definition per file (see define.ts). The
 * broker registers exactly this list, in this order; ApiVersions advertises it.
 */
import produce from './00-produce.js';
import fetch from './01-fetch.js';
import listOffsets from './02-list-offsets.js';
import metadata from './03-metadata.js';
import offsetCommit from './08-offset-commit.js';
import offsetFetch from './09-offset-fetch.js';
import findCoordinator from './10-find-coordinator.js';
import joinGroup from './11-join-group.js';
import heartbeat from './12-heartbeat.js';
import leaveGroup from './13-leave-group.js';
import syncGroup from './14-sync-group.js';
import describeGroups from './15-describe-groups.js';
import listGroups from './16-list-groups.js';
import saslHandshake from './17-sasl-handshake.js';
import apiVersions from './18-api-versions.js';
import createTopics from './19-create-topics.js';
import deleteTopics from './20-delete-topics.js';
import initProducerId from './22-init-producer-id.js';
import addPartitionsToTxn from './24-add-partitions-to-txn.js';
import addOffsetsToTxn from './25-add-offsets-to-txn.js';
import endTxn from './26-end-txn.js';
import writeTxnMarkers from './27-write-txn-markers.js';
import txnOffsetCommit from './28-txn-offset-commit.js';
import describeAcls from './29-describe-acls.js';
import createAcls from './30-create-acls.js';
import deleteAcls from './31-delete-acls.js';
import describeConfigs from './32-describe-configs.js';
import saslAuthenticate from './36-sasl-authenticate.js';
import createPartitions from './37-create-partitions.js';
import deleteGroups from './42-delete-groups.js';
import incrementalAlterConfigs from './44-incremental-alter-configs.js';
import offsetDelete from './47-offset-delete.js';
import describeCluster from './60-describe-cluster.js';
import describeProducers from './61-describe-producers.js';
import describeTransactions from './65-describe-transactions.js';
import listTransactions from './66-list-transactions.js';
import consumerGroupHeartbeat from './68-consumer-group-heartbeat.js';
import consumerGroupDescribe from './69-consumer-group-describe.js';
import shareGroupHeartbeat from './76-share-group-heartbeat.js';
import shareGroupDescribe from './77-share-group-describe.js';
import shareFetch from './78-share-fetch.js';
import shareAcknowledge from './79-share-acknowledge.js';
import describeShareGroupOffsets from './90-describe-share-group-offsets.js';
import alterShareGroupOffsets from './91-alter-share-group-offsets.js';
import deleteShareGroupOffsets from './92-delete-share-group-offsets.js';
import addShareAcksToTxn from './95-add-share-acks-to-txn.js';
import txnShareAcknowledge from './96-txn-share-acknowledge.js';
import type { BrokerApi } from './define.js';

export const BROKER_APIS: readonly BrokerApi[] = [
  produce,
  fetch,
  listOffsets,
  metadata,
  offsetCommit,
  offsetFetch,
  findCoordinator,
  joinGroup,
  heartbeat,
  leaveGroup,
  syncGroup,
  describeGroups,
  listGroups,
  saslHandshake,
  apiVersions,
  createTopics,
  deleteTopics,
  initProducerId,
  addPartitionsToTxn,
  addOffsetsToTxn,
  endTxn,
  writeTxnMarkers,
  txnOffsetCommit,
  describeAcls,
  createAcls,
  deleteAcls,
  describeConfigs,
  saslAuthenticate,
  createPartitions,
  deleteGroups,
  incrementalAlterConfigs,
  offsetDelete,
  describeCluster,
  describeProducers,
  describeTransactions,
  listTransactions,
  consumerGroupHeartbeat,
  consumerGroupDescribe,
  shareGroupHeartbeat,
  shareGroupDescribe,
  shareFetch,
  shareAcknowledge,
  describeShareGroupOffsets,
  alterShareGroupOffsets,
  deleteShareGroupOffsets,
  addShareAcksToTxn,
  txnShareAcknowledge,
];
