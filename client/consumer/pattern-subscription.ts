/**
 * subscribe(RegExp) under the classic protocol, resolved by the client as
 * Kafka's ClassicKafkaConsumer does: the topics come from an all-topics
 * Metadata request, internal topics left out (Kafka's ConsumerMetadata.retainTopic
 * with exclude.internal.topics=true, its default), and those whose whole
 * name matches become the subscription the group sees
 * (ConsumerCoordinator.updatePatternSubscription). Re-evaluated whenever the
 * metadata is refreshed, every metadata.max.age.ms, so new topics join.
 */
import type { ClusterClient } from '../cluster.js';
import type { SubscriptionState } from './subscription-state.js';

/** Resolves the pattern against the cluster's topics now; the topics when they changed, else null. */
export async function updatePatternSubscription(cluster: ClusterClient, subscriptions: SubscriptionState, deadline: number): Promise<readonly string[] | null> {
  const topics = await cluster.allTopics(deadline);
  const matching = topics.filter((t) => !t.isInternal && subscriptions.matchesSubscribedPattern(t.name)).map((t) => t.name);
  return subscriptions.subscribeFromPattern(matching) ? subscriptions.subscription() : null;
}
