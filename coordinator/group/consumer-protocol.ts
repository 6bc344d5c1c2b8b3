/**
 * The topics of a classic member's subscription (the consumer protocol's
 * ConsumerProtocolSubscription, the bytes a member of a `consumer` group gives
 * JoinGroup): what Kafka's ClassicGroup.computeSubscribedTopics reads to tell
 * whether a group still consumes a topic (OffsetDelete's GROUP_SUBSCRIBED_TO_TOPIC).
 * Every version starts with the int16 version and the topics as a non-compact
 * array of strings; the rest is not needed here.
 */
import { Reader } from '../../runtime/index.js';

/** The subscribed topics, or null when the bytes are not a subscription Kafka's schema accepts. */
export function subscribedTopics(metadata: Uint8Array): string[] | null {
  try {
    const reader = new Reader(metadata);
    reader.int16();
    const count = reader.int32();
    if (count < 0) return null;
    const topics: string[] = [];
    for (let i = 0; i < count; i++) topics.push(reader.string(false));
    return topics;
  } catch {
    return null;
  }
}
