import { ErrorCode, ShareError } from './share-error.js';

/** AcknowledgeType of ShareFetch/ShareAcknowledge/TxnShareAcknowledge (Kafka's AcknowledgeType ids). */
export const AckType = {
  GAP: 0,
  ACCEPT: 1,
  RELEASE: 2,
  REJECT: 3,
  /** KIP-1222, ShareFetch/ShareAcknowledge v2 with IsRenewAck. */
  RENEW: 4,
} as const;
export type AckTypeValue = (typeof AckType)[keyof typeof AckType];

/** The types a transactional acknowledgement may carry (the KIP's schema: 1 Accept, 2 Release, 3 Reject). */
export type TxnAckType = typeof AckType.ACCEPT | typeof AckType.RELEASE | typeof AckType.REJECT;

const ACK_TYPE_NAMES = ['GAP', 'ACCEPT', 'RELEASE', 'REJECT', 'RENEW'];
export function ackTypeName(type: number): string {
  return ACK_TYPE_NAMES[type] ?? `TYPE_${type}`;
}

/**
 * One validated acknowledgement range: either one type for all its offsets or
 * one type per offset (`types.length === lastOffset - firstOffset + 1`).
 */
export interface AckRange {
  firstOffset: bigint;
  lastOffset: bigint;
  types: readonly number[];
}

export function ackTypeAt(range: AckRange, offset: bigint): number {
  return range.types.length === 1 ? range.types[0]! : range.types[Number(offset - range.firstOffset)]!;
}

/** What a request's batches look like before validation (ShareFetch and ShareAcknowledge share this shape). */
export interface WireAckBatch {
  firstOffset: bigint;
  lastOffset: bigint;
  acknowledgeTypes: number[];
}

/**
 * Checks the acknowledgement batches of one partition as Kafka does and throws
 * ShareError(INVALID_REQUEST) naming the first problem: first > last, negative
 * offsets, batches unsorted or overlapping, a number of types that is neither 1
 * nor the range's length, or a type out of range. RENEW is only valid when the
 * request says IsRenewAck (v2).
 */
export function validateAckBatches(batches: readonly WireAckBatch[], allowRenew: boolean): AckRange[] {
  const maxType = allowRenew ? AckType.RENEW : AckType.REJECT;
  let previousLast = -1n;
  const ranges: AckRange[] = [];
  for (const [i, batch] of batches.entries()) {
    const { firstOffset, lastOffset, acknowledgeTypes: types } = batch;
    if (firstOffset < 0n) throw invalid(`batch ${i}: negative first offset ${firstOffset}`);
    if (firstOffset > lastOffset) throw invalid(`batch ${i}: first offset ${firstOffset} is after last offset ${lastOffset}`);
    if (firstOffset <= previousLast) {
      throw invalid(`batch ${i}: offsets ${firstOffset}-${lastOffset} overlap or precede the previous batch (batches must be sorted and disjoint)`);
    }
    const length = lastOffset - firstOffset + 1n;
    if (types.length !== 1 && BigInt(types.length) !== length) {
      throw invalid(`batch ${i}: ${types.length} acknowledge types for ${length} offsets (must be 1 or one per offset)`);
    }
    for (const type of types) {
      if (!Number.isInteger(type) || type < AckType.GAP || type > maxType) {
        throw invalid(`batch ${i}: acknowledge type ${type} is out of range` + (type === AckType.RENEW ? ' (RENEW needs IsRenewAck, v2)' : ''));
      }
    }
    previousLast = lastOffset;
    ranges.push({ firstOffset, lastOffset, types });
  }
  return ranges;
}

/** TxnShareAcknowledge batches: one type per batch, which must be Accept, Release or Reject. */
export function validateTxnAckBatches(batches: readonly { firstOffset: bigint; lastOffset: bigint; acknowledgeType: number }[]): AckRange[] {
  const ranges = validateAckBatches(
    batches.map((b) => ({ firstOffset: b.firstOffset, lastOffset: b.lastOffset, acknowledgeTypes: [b.acknowledgeType] })),
    false,
  );
  for (const [i, range] of ranges.entries()) {
    const type = range.types[0]!;
    if (type !== AckType.ACCEPT && type !== AckType.RELEASE && type !== AckType.REJECT) {
      throw invalid(`batch ${i}: a transactional acknowledgement is Accept (1), Release (2) or Reject (3), not ${type}`);
    }
  }
  return ranges;
}

function invalid(message: string): ShareError {
  return new ShareError(ErrorCode.INVALID_REQUEST, message);
}
