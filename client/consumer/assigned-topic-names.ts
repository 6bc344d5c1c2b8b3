/**
 * Topic names for the topic ids of a `group.protocol=consumer` assignment
 * (the coordinator sends ids only): from the metadata, else from the names of
 * topics assigned to this member until now, so that revoking a topic just
 * deleted still has its name; ids neither knows ask the metadata again
 * (Kafka's AbstractMembershipManager.assignedTopicNamesCache and
 * findResolvableAssignmentAndTriggerMetadataUpdate).
 */
import type { ClusterClient } from '../cluster.js';

export class AssignedTopicNames {
  private readonly cache = new Map<string, string>();

  constructor(
    private readonly cluster: ClusterClient,
    private readonly groupId: string,
  ) {}

  /** Names of the ids that can be resolved now; the others are left out (and logged). */
  async resolve(topicIds: readonly string[], deadline: number): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    const unknown: string[] = [];
    for (const id of topicIds) {
      const name = this.cluster.topicById(id)?.name ?? this.cache.get(id);
      if (name === undefined) unknown.push(id);
      else names.set(id, name);
    }
    if (unknown.length > 0) {
      const found = await this.cluster.topicsByIds(unknown, deadline).catch((error: unknown) => {
        this.cluster.logger.debug(`consumer group ${this.groupId}: metadata for assigned topic ids failed: ${(error as Error).message}`);
        return new Map<string, { name: string }>();
      });
      for (const [id, topic] of found) names.set(id, topic.name);
      const missing = unknown.filter((id) => !names.has(id));
      if (missing.length > 0)
        this.cluster.logger.warn(`consumer group ${this.groupId}: assigned topic ids ${missing.join(', ')} are not in the metadata yet; reconciling the rest`);
    }
    return names;
  }

  /** After a reconciliation: the names of what is assigned now, and only those. */
  keepOnly(assigned: ReadonlyMap<string, string>): void {
    this.cache.clear();
    for (const [id, name] of assigned) this.cache.set(id, name);
  }

  clear(): void {
    this.cache.clear();
  }
}
