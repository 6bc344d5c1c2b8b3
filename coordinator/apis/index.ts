/**
 * Every API the broker serves, one definition per file (see define.ts). The
 * broker registers exactly this list, in this order; ApiVersions advertises it.
 */
import offsetCommit from './08-offset-commit.js';
import offsetFetch from './09-offset-fetch.js';
import joinGroup from './11-join-group.js';
import heartbeat from './12-heartbeat.js';
import leaveGroup from './13-leave-group.js';
import syncGroup from './14-sync-group.js';
import describeGroups from './15-describe-groups.js';
import listGroups from './16-list-groups.js';
import apiVersions from './18-api-versions.js';
import addOffsetsToTxn from './25-add-offsets-to-txn.js';
import endTxn from './26-end-txn.js';
import txnOffsetCommit from './28-txn-offset-commit.js';
import deleteGroups from './42-delete-groups.js';
import consumerGroupHeartbeat from './68-consumer-group-heartbeat.js';
import consumerGroupDescribe from './69-consumer-group-describe.js';
import shareGroupHeartbeat from './76-share-group-heartbeat.js';
import shareGroupDescribe from './77-share-group-describe.js';
import shareFetch from './78-share-fetch.js';
import shareAcknowledge from './79-share-acknowledge.js';
import txnShareAcknowledge from './96-txn-share-acknowledge.js';
import type { BrokerApi } from './define.js';

export const BROKER_APIS: readonly BrokerApi[] = [
  offsetCommit,
  offsetFetch,
  joinGroup,
  heartbeat,
  leaveGroup,
  syncGroup,
  describeGroups,
  listGroups,
  apiVersions,
  addOffsetsToTxn,
  endTxn,
  txnOffsetCommit,
  deleteGroups,
  consumerGroupHeartbeat,
  consumerGroupDescribe,
  shareGroupHeartbeat,
  shareGroupDescribe,
  shareFetch,
  shareAcknowledge,
  txnShareAcknowledge,
];
