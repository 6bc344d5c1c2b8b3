import type { BrokerContext } from '../broker-context.js';
import { KipgenShareCoordinator, type ShareCoordinatorOptions } from './share-coordinator.js';

/**
 * The share coordinator's entry point: startBroker imports it and calls
 * createShareCoordinator with the node's BrokerContext (unless it is given
 * another factory, or null for none).
 */
export function createShareCoordinator(ctx: BrokerContext, options?: ShareCoordinatorOptions): KipgenShareCoordinator {
  return new KipgenShareCoordinator(ctx, options);
}

export { KipgenShareCoordinator, type ShareCoordinatorOptions } from './share-coordinator.js';
export { DEFAULT_SHARE_CONFIG, shareConfig, type ShareConfig } from './share-config.js';
export { ManualClock, systemClock, type Clock } from './clock.js';
export { StandaloneStateLog } from './standalone-state-log.js';
