/**
 * Per-group configuration (KIP-848/KIP-932 group configs), set with
 * IncrementalAlterConfigs on a GROUP resource and read with DescribeConfigs.
 * Kafka keeps them in the cluster metadata; kipgen keeps them in
 * `<dataDir>/group-configs.json` on every node (written atomically, passed to
 * the peers like topic changes, see topic-admin.ts). A group need not exist
 * to be configured, as in Kafka.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic } from '../cluster.js';
import { GROUP_CONFIGS, configDef, validateConfigs } from './config-defs.js';

/** group.consumer.max.heartbeat.interval.ms: Kafka's default; kipgen does not make it a setting. */
const CONSUMER_MAX_HEARTBEAT_INTERVAL_MS = 15_000;

export class GroupConfigs {
  private readonly file: string;
  private readonly byGroup: Map<string, Record<string, string>>;

  /**
   * `defaults`: the broker's value of each group config where it differs from Kafka's default;
   * `consumerMinHeartbeatIntervalMs`: group.consumer.min.heartbeat.interval.ms.
   */
  constructor(
    dataDir: string,
    private readonly defaults: Readonly<Record<string, string>>,
    private readonly consumerMinHeartbeatIntervalMs: number = 5_000,
  ) {
    this.file = path.join(dataDir, 'group-configs.json');
    this.byGroup = new Map();
    if (fs.existsSync(this.file)) {
      let parsed: { groups?: Record<string, Record<string, string>> };
      try {
        parsed = JSON.parse(fs.readFileSync(this.file, 'utf8'));
      } catch (error) {
        throw new Error(`${this.file} is not valid JSON (${(error as Error).message}); restore it or remove it to drop the group configs`);
      }
      for (const [group, configs] of Object.entries(parsed.groups ?? {})) this.byGroup.set(group, configs);
    }
  }

  /** The configs set on the group (keys absent are at the broker default). */
  overrides(groupId: string): Readonly<Record<string, string>> {
    return this.byGroup.get(groupId) ?? {};
  }

  /** The broker-level value of a group config (what a group without an override gets). */
  brokerDefault(name: string): string {
    return this.defaults[name] ?? configDef(GROUP_CONFIGS, name)!.defaultValue;
  }

  /** The value in force for the group: its override, else the broker's default. */
  value(groupId: string, name: string): string {
    return this.byGroup.get(groupId)?.[name] ?? this.brokerDefault(name);
  }

  /** Why `configs` (the group's whole new set) is not acceptable, or null. */
  check(groupId: string, configs: Readonly<Record<string, string>>): string | null {
    const problem = validateConfigs(GROUP_CONFIGS, 'group', configs);
    if (problem !== null) return problem;
    const effective = (name: string): number => Number(configs[name] ?? this.brokerDefault(name));
    // Kafka's GroupConfig.validateValues: within the broker's group.consumer.min/max.heartbeat.interval.ms (max: Kafka's default).
    const interval = effective('consumer.heartbeat.interval.ms');
    if (interval < this.consumerMinHeartbeatIntervalMs) {
      return `consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms (${this.consumerMinHeartbeatIntervalMs}), got ${interval} (group ${groupId})`;
    }
    if (interval > CONSUMER_MAX_HEARTBEAT_INTERVAL_MS) {
      return `consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms (${CONSUMER_MAX_HEARTBEAT_INTERVAL_MS}), got ${interval} (group ${groupId})`;
    }
    for (const kind of ['consumer', 'share']) {
      if (effective(`${kind}.session.timeout.ms`) <= effective(`${kind}.heartbeat.interval.ms`)) {
        return `${kind}.session.timeout.ms must be greater than ${kind}.heartbeat.interval.ms (group ${groupId})`;
      }
    }
    return null;
  }

  /** Replaces the group's overrides and persists them (fsync + rename) before returning. */
  set(groupId: string, configs: Readonly<Record<string, string>>): void {
    if (Object.keys(configs).length === 0) this.byGroup.delete(groupId);
    else this.byGroup.set(groupId, { ...configs });
    writeFileAtomic(this.file, JSON.stringify({ groups: Object.fromEntries(this.byGroup) }, null, 2) + '\n');
  }
}
