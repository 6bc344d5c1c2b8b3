/**
 * The topics of a classic member's subscription (the consumer protocol's
 * ConsumerProtocolSubscription, the bytes a member of a `consumer` group gives
 * JoinGroup): what Kafka's ClassicGroup.computeSubscribedTopics reads to tell
 * whether a group still consumes a topic (OffsetDelete's GROUP_SUBSCRIBED_TO_TOPIC).
 * As there, the int16 version is skipped and the rest read with the generated
 * codec at version 0, the prefix every version starts with, so the broker does
 * not depend on the member's version; what later versions append is ignored.
 */
import { ConsumerProtocolSubscription } from '../../generated/index.js';

/** The subscribed topics, or null when the bytes are not a subscription Kafka's schema accepts (Kafka's SchemaException). */
export function subscribedTopics(metadata: Uint8Array): string[] | null {
  if (metadata.length < 2) return null;
  try {
    return ConsumerProtocolSubscription.decode(metadata.subarray(2), 0, { onTrailingBytes: () => {} }).topics;
  } catch {
    return null;
  }
}
