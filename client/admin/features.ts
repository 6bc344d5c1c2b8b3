/**
 * Admin.describeFeatures: the cluster's feature flags (KIP-584) as a broker's
 * ApiVersions answer reports them — the finalized levels the cluster runs at,
 * their epoch, and the range of levels this broker supports.
 *
 * Kafka: KafkaAdminClient.describeFeatures (ApiVersions to the least loaded
 * broker, or the active controller when bootstrapped to controllers; we only
 * bootstrap to brokers), FeatureMetadata, FinalizedVersionRange, SupportedVersionRange.
 */
import { ApiVersionsRequest, ApiVersionsResponse } from '../../generated/index.js';
import { deadlineOf, sendWithRetries, type AdminCallOptions, type AdminContext } from './call.js';

/** Kafka's FinalizedVersionRange. */
export interface FinalizedVersionRange {
  minVersionLevel: number;
  maxVersionLevel: number;
}

/** Kafka's SupportedVersionRange. */
export interface SupportedVersionRange {
  minVersion: number;
  maxVersion: number;
}

/** Kafka's FeatureMetadata. */
export interface FeatureMetadata {
  finalizedFeatures: Map<string, FinalizedVersionRange>;
  /** Undefined when the broker reports none (-1 on the wire, or ApiVersions before v3). */
  finalizedFeaturesEpoch: bigint | undefined;
  supportedFeatures: Map<string, SupportedVersionRange>;
}

export async function describeFeatures(admin: AdminContext, options?: AdminCallOptions): Promise<FeatureMetadata> {
  const deadline = deadlineOf(admin, options);
  const { response } = await sendWithRetries(
    admin,
    'ApiVersions (describeFeatures)',
    'any',
    deadline,
    ApiVersionsRequest,
    ApiVersionsResponse,
    () => ApiVersionsRequest.create({ clientSoftwareName: 'kipgen', clientSoftwareVersion: '0.1.0' }),
    { topLevelError: (r) => ({ code: r.errorCode, message: null }) },
  );
  return {
    finalizedFeatures: new Map(response.finalizedFeatures.map((f) => [f.name, { minVersionLevel: f.minVersionLevel, maxVersionLevel: f.maxVersionLevel }])),
    finalizedFeaturesEpoch: response.finalizedFeaturesEpoch >= 0n ? response.finalizedFeaturesEpoch : undefined,
    supportedFeatures: new Map(response.supportedFeatures.map((f) => [f.name, { minVersion: f.minVersion, maxVersion: f.maxVersion }])),
  };
}
