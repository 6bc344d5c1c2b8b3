/**
 * Admin's share-group offset calls (KIP-932): describeShareGroupOffsets,
 * alterShareGroupOffsets, deleteShareGroupOffsets — Kafka's
 * DescribeShareGroupOffsets (90), AlterShareGroupOffsets (91) and
 * DeleteShareGroupOffsets (92).
 *
 * Not built yet: kipgen's broker does not serve these APIs and kipgen has no
 * codecs for them, so each entry is Kafka's UNSUPPORTED_VERSION (what Kafka's
 * own Admin reports against a broker without them), with a message saying so.
 * A share group's start offset is set today with the group config
 * `share.auto.offset.reset` before the group first consumes.
 */
import { UnsupportedVersionError } from '../errors.js';
import { AdminResult, type EntryOutcome } from './result.js';

const API_OF = {
  describeShareGroupOffsets: 'DescribeShareGroupOffsets (API 90)',
  alterShareGroupOffsets: 'AlterShareGroupOffsets (API 91)',
  deleteShareGroupOffsets: 'DeleteShareGroupOffsets (API 92)',
} as const;

/** Every group's entry: UnsupportedVersionError naming the API. */
export function unsupportedShareGroupOffsets<V>(call: keyof typeof API_OF, groupIds: readonly string[]): AdminResult<string, V> {
  const outcomes = new Map<string, EntryOutcome<V>>();
  for (const groupId of groupIds) {
    outcomes.set(groupId, {
      ok: false,
      error: new UnsupportedVersionError(
        `${call} (group ${groupId}): kipgen's Admin does not implement ${API_OF[call]} yet, and kipgen's broker does not serve it; ` +
          "set a share group's start with the group config share.auto.offset.reset instead",
      ),
    });
  }
  return new AdminResult(outcomes);
}
