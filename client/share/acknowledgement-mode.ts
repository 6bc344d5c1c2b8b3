/**
 * The share consumer's acknowledgement mode (Kafka's ShareAcknowledgementMode,
 * share.acknowledgement.mode, with KIP-1289's 'transactional'): the mode
 * configured, the mode in effect (transactional falls back to explicit when
 * the application opted in and a broker lacks TxnShareAcknowledge), and the
 * check that decides it.
 */
import type { ClusterClient } from '../cluster.js';
import { ConfigError, UnsupportedVersionError } from '../errors.js';
import { TxnShareAcknowledgeRequest } from '../../generated/index.js';
import { TRANSACTIONAL_ACKNOWLEDGE } from './protocol.js';

export type AcknowledgementMode = 'implicit' | 'explicit' | 'transactional';

const MODES: readonly AcknowledgementMode[] = ['implicit', 'explicit', 'transactional'];

/** The configured mode ('implicit' when unset); ConfigError for anything else. */
export function parseAcknowledgementMode(mode: AcknowledgementMode | undefined): AcknowledgementMode {
  const configured = mode ?? 'implicit';
  if (!MODES.includes(configured)) {
    throw new ConfigError(`acknowledgementMode must be 'implicit', 'explicit' or 'transactional', not ${JSON.stringify(configured)}`);
  }
  return configured;
}

export class AcknowledgementModeState {
  readonly configured: AcknowledgementMode;
  /** The mode in effect ('explicit' after an opted-in fallback). */
  current: AcknowledgementMode;
  /**
   * Whether poll() remembers the records it delivered (for acknowledge(),
   * implicit acceptance and the explicit-mode check): not in transactional
   * mode without fallback, where the consumer never acknowledges records.
   */
  readonly tracksDelivered: boolean;

  constructor(
    /** From parseAcknowledgementMode. */
    configured: AcknowledgementMode,
    private readonly allowFallback: boolean,
    private readonly cluster: ClusterClient,
    /** The consumer cannot go on: poll() throws `error` from now on. */
    private readonly onFatal: (error: Error) => void,
  ) {
    this.configured = configured;
    this.current = configured;
    this.tracksDelivered = configured !== 'transactional' || allowFallback;
  }

  /** Transactional mode needs TxnShareAcknowledge (API 96) on `nodeId`: fail fast, or fall back when opted in. */
  async checkTransactionalSupport(nodeId: number, deadline?: number): Promise<void> {
    if (this.current !== 'transactional') return;
    const supported = await this.cluster.supports(nodeId, TRANSACTIONAL_ACKNOWLEDGE.apiKey, TRANSACTIONAL_ACKNOWLEDGE.minVersion, deadline);
    if (supported) return;
    const what = `broker ${this.cluster.describeMissingApi(nodeId, TxnShareAcknowledgeRequest, 'KIP-1289')}; acknowledgementMode 'transactional' needs it`;
    if (!this.allowFallback) {
      const error = new UnsupportedVersionError(
        `${what}. Upgrade the broker, or set allowExplicitFallback: true to use explicit acknowledgements without exactly-once guarantees.`,
      );
      this.onFatal(error);
      throw error;
    }
    this.cluster.logger.warn(
      `share consumer ${this.cluster.clientId}: ${what}; falling back to 'explicit' acknowledgements (allowExplicitFallback). ` +
        'Acknowledgements are no longer atomic with a transaction.',
    );
    this.current = 'explicit';
  }
}
