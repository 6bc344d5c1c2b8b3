import type { CoordinatorLog } from '../broker-context.js';

/**
 * What the share coordinator needs from this node's `__share_group_state`
 * partition: the broker's CoordinatorLog (broker-context.ts) minus the reads.
 * `append` resolves once the batch is in the log (fsynced when the broker's
 * flush settings say so; transactional when given a
 * producer, in which case the broker checks the producer's transaction);
 * `batches` replays every batch, control markers included. StandaloneStateLog is a
 * stand-alone implementation over one file.
 */
export type StateLog = Pick<CoordinatorLog, 'append' | 'batches'>;
