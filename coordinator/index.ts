/**
 * The broker as a library (@kipgen/broker): `startBroker(config)` runs a
 * Kafka broker on 127.0.0.1 inside the calling process — an embedded Kafka
 * for tests — and returns its port and `close()`.
 */
export { startBroker, type Broker, type StartOptions } from './broker.js';
export {
  DEFAULT_DATA_DIR,
  defaultConfig,
  loadConfigFile,
  parseTopicArg,
  resolveConfig,
  type BrokerConfig,
  type BrokerConfigInput,
  type TopicConfig,
} from './config.js';
export type { MetricsSnapshot } from './metrics.js';
