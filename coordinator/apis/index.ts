/**
 * Every API the broker serves, one definition per file (see define.ts). The
 * broker registers exactly this list, in this order; ApiVersions advertises it.
 */
import apiVersions from './18-api-versions.js';
import addOffsetsToTxn from './25-add-offsets-to-txn.js';
import endTxn from './26-end-txn.js';
import type { BrokerApi } from './define.js';

export const BROKER_APIS: readonly BrokerApi[] = [apiVersions, addOffsetsToTxn, endTxn];
