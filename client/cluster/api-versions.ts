/**
 * A node's API versions and finalized features, as its ApiVersions answered
 * (Kafka's NodeApiVersions): how they are asked for when a connection opens,
 * the version a request is sent at, and why a node cannot take a request.
 */
import { ApiVersionsRequest, ApiVersionsResponse } from '../../generated/index.js';
import type { KafkaConnection } from '../../connection/connection.js';
import type { ApiMessageCodec } from '../../runtime/codec.js';
import { Errors, errorFromCode, UnsupportedVersionError } from '../errors.js';

export interface NodeApiVersions {
  /** API key → [min, max] the node supports. */
  versions: Map<number, readonly [number, number]>;
  /** Finalized feature levels the node reported (ApiVersions v3+), e.g. transaction.version. */
  features: Map<string, number>;
}

/**
 * ApiVersions at the highest version we know, then once more at the broker's
 * highest if it answers UNSUPPORTED_VERSION with its own range (KIP-511, as
 * Kafka's NetworkClient.handleApiVersionsResponse).
 */
export async function negotiateApiVersions(connection: KafkaConnection, nodeId: number): Promise<NodeApiVersions> {
  let version = ApiVersionsRequest.validVersions.highest;
  for (let i = 0; ; i++) {
    const request = ApiVersionsRequest.create({ clientSoftwareName: 'kipgen', clientSoftwareVersion: '0.1.0' });
    const response = await connection.send(ApiVersionsRequest, request, version, ApiVersionsResponse);
    if (response.errorCode === Errors.UNSUPPORTED_VERSION) {
      const theirs = response.apiKeys.find((k) => k.apiKey === ApiVersionsRequest.apiKey);
      if (theirs && i === 0) {
        version = Math.min(theirs.maxVersion, version);
        continue;
      }
    }
    if (response.errorCode !== Errors.NONE) throw errorFromCode(response.errorCode, `ApiVersions to node ${nodeId}`);
    return {
      versions: new Map(response.apiKeys.map((k) => [k.apiKey, [k.minVersion, k.maxVersion] as const])),
      features: response.finalizedFeaturesEpoch >= 0n ? new Map(response.finalizedFeatures.map((f) => [f.name, f.maxVersionLevel] as const)) : new Map(),
    };
  }
}

/**
 * The highest version of `codec`'s API both sides support, within
 * [min, max] (Kafka's NodeApiVersions.latestUsableVersion);
 * UnsupportedVersionError if there is none, naming the node.
 */
export function latestUsableVersion(
  node: { id: number; host: string; port: number },
  api: NodeApiVersions,
  codec: ApiMessageCodec<unknown>,
  limits: { min?: number; max?: number },
): number {
  const name = apiName(codec);
  const range = api.versions.get(codec.apiKey);
  if (!range) {
    throw new UnsupportedVersionError(`node ${node.id} (${node.host}:${node.port}) does not support ${name} (API key ${codec.apiKey}); upgrade the broker`);
  }
  const low = Math.max(range[0], codec.validVersions.lowest, limits.min ?? 0);
  const high = Math.min(range[1], codec.validVersions.highest, limits.max ?? Infinity);
  if (low > high) {
    throw new UnsupportedVersionError(
      `node ${node.id} supports ${name} v${range[0]}-${range[1]}, this client v${Math.max(codec.validVersions.lowest, limits.min ?? 0)}-${Math.min(codec.validVersions.highest, limits.max ?? Infinity)}; no common version`,
    );
  }
  return high;
}

/**
 * Why a node lacks an API, for an UnsupportedVersionError: the API by name
 * and key, the versions kipgen speaks, and what the node's ApiVersions offers
 * instead, e.g. "node 1 (…) does not support TxnShareAcknowledge (API 96;
 * kipgen sends v0–1): it advertises API keys 0–92 (87 APIs) and no version
 * of 96". A broker reports no software version, so its API key range is what
 * tells an operator how old it is. `api` is undefined for a node never connected.
 */
export function describeMissingApi(node: string, api: NodeApiVersions | undefined, codec: ApiMessageCodec<unknown>, note: string): string {
  const name = apiName(codec);
  const { lowest, highest } = codec.validVersions;
  const ours = `kipgen sends v${lowest}${highest === lowest ? '' : `–${highest}`}`;
  const head = `${node} does not support ${name} (API ${codec.apiKey}${note ? `, ${note}` : ''}; ${ours})`;
  if (api === undefined || api.versions.size === 0) return `${head}: its ApiVersions is not known`;
  const keys = [...api.versions.keys()];
  const range = api.versions.get(codec.apiKey);
  const offers = range === undefined ? `no version of ${codec.apiKey}` : `${name} v${range[0]}–${range[1]} only`;
  return `${head}: it advertises API keys ${Math.min(...keys)}–${Math.max(...keys)} (${keys.length} APIs) and ${offers}`;
}

function apiName(codec: ApiMessageCodec<unknown>): string {
  return codec.name.replace(/Request$/, '');
}
