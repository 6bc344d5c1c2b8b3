/**
 * Every API the broker serves, one definition per file (see define.ts). The
 * broker registers exactly this list, in this order; ApiVersions advertises it.
 */
import produce from './00-produce.js';
import fetch from './01-fetch.js';
import listOffsets from './02-list-offsets.js';
import metadata from './03-metadata.js';
import findCoordinator from './10-find-coordinator.js';
import saslHandshake from './17-sasl-handshake.js';
import apiVersions from './18-api-versions.js';
import createTopics from './19-create-topics.js';
import deleteTopics from './20-delete-topics.js';
import initProducerId from './22-init-producer-id.js';
import addPartitionsToTxn from './24-add-partitions-to-txn.js';
import addOffsetsToTxn from './25-add-offsets-to-txn.js';
import endTxn from './26-end-txn.js';
import writeTxnMarkers from './27-write-txn-markers.js';
import describeAcls from './29-describe-acls.js';
import createAcls from './30-create-acls.js';
import deleteAcls from './31-delete-acls.js';
import describeConfigs from './32-describe-configs.js';
import saslAuthenticate from './36-sasl-authenticate.js';
import createPartitions from './37-create-partitions.js';
import incrementalAlterConfigs from './44-incremental-alter-configs.js';
import describeCluster from './60-describe-cluster.js';
import addShareAcksToTxn from './95-add-share-acks-to-txn.js';
import type { BrokerApi } from './define.js';

export const BROKER_APIS: readonly BrokerApi[] = [
  produce,
  fetch,
  listOffsets,
  metadata,
  findCoordinator,
  saslHandshake,
  apiVersions,
  createTopics,
  deleteTopics,
  initProducerId,
  addPartitionsToTxn,
  addOffsetsToTxn,
  endTxn,
  writeTxnMarkers,
  describeAcls,
  createAcls,
  deleteAcls,
  describeConfigs,
  saslAuthenticate,
  createPartitions,
  incrementalAlterConfigs,
  describeCluster,
  addShareAcksToTxn,
];
