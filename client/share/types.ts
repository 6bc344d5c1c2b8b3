/**
 * Shapes the parts of the share consumer hand each other: a partition by
 * topic id, acknowledgements as they go on the wire, and the result the
 * application's acknowledgement commit callback receives.
 */

/** A partition of the assignment, by topic id (what the share APIs name) and name (what the application sees). */
export interface TopicPartitionRef {
  topicId: string;
  topic: string;
  partition: number;
}

/** One AcknowledgementBatch of ShareFetch / ShareAcknowledge: one type for the whole range. */
export interface AckBatch {
  firstOffset: bigint;
  lastOffset: bigint;
  acknowledgeTypes: number[];
}

/** The acknowledgements of one partition on their way to its leader. */
export interface PartitionAckBatches {
  ref: TopicPartitionRef;
  batches: AckBatch[];
}

/** Result of committing acknowledgements: per topic-partition, null or the error. */
export type AcknowledgementCommitResult = Map<string, Error | null>;
export type AcknowledgementCommitCallback = (result: AcknowledgementCommitResult, error: Error | null) => void;

/** Hands a result (never empty) to the application's callback, with its first error. */
export type AckResultListener = (result: AcknowledgementCommitResult) => void;

export const tpKey = (topicId: string, partition: number): string => `${topicId}:${partition}`;

/** How results name a partition: `topic-partition`. */
export const resultKey = (ref: TopicPartitionRef): string => `${ref.topic}-${ref.partition}`;

export function firstError(result: AcknowledgementCommitResult): Error | null {
  for (const error of result.values()) if (error !== null) return error;
  return null;
}
