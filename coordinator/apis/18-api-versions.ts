/**
 * ApiVersions (key 18): the APIs this broker serves and their version ranges —
 * exactly the definitions of apis/index.ts that are switched on — and the
 * features it supports and has finalized (transaction.version).
 *
 * Kafka: KafkaApis.handleApiVersionsRequest, ApiVersionsResponse.
 * - A version above the highest served is answered by the dispatcher (server/dispatch.ts) in
 *   v0 with UNSUPPORTED_VERSION and ApiVersions' own range only, as Kafka does.
 * - v3+: an invalid client software name or version is INVALID_REQUEST, with the
 *   API list still filled in (Kafka validates with the same pattern).
 * - Before v4 a feature whose lowest supported level is 0 is left out (KAFKA-17011).
 * - The cluster's features never change while it runs: the finalized epoch is 0
 *   when there are features, else -1.
 * Anyone may call it, before authentication too.
 */
import { ApiVersionsRequest } from '../../generated/ApiVersionsRequest.js';
import { ApiVersionsResponse } from '../../generated/ApiVersionsResponse.js';
import { ErrorCode } from '../errors.js';
import { allowAnyone, defineApi } from './define.js';

/** Kafka's pattern for client software names and versions (ApiVersionsRequest.isValid). */
const SOFTWARE_PATTERN = /^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$/;

export default defineApi({
  request: ApiVersionsRequest,
  response: ApiVersionsResponse,
  authorize: allowAnyone(),
  handler: ({ config, served }) => {
    const features = [{ name: 'transaction.version', min: 0, max: 2, finalized: config.transactionVersion }];
    return async (request, ctx) => {
      if (ctx.apiVersion >= 3 && (!SOFTWARE_PATTERN.test(request.clientSoftwareName) || !SOFTWARE_PATTERN.test(request.clientSoftwareVersion))) {
        return ApiVersionsResponse.create({ errorCode: ErrorCode.INVALID_REQUEST, apiKeys: served() });
      }
      return ApiVersionsResponse.create({
        errorCode: ErrorCode.NONE,
        apiKeys: served(),
        supportedFeatures: features.filter((f) => ctx.apiVersion >= 4 || f.min > 0).map((f) => ({ name: f.name, minVersion: f.min, maxVersion: f.max })),
        finalizedFeaturesEpoch: features.length > 0 ? 0n : -1n,
        finalizedFeatures: features.filter((f) => f.finalized > 0).map((f) => ({ name: f.name, minVersionLevel: f.finalized, maxVersionLevel: f.finalized })),
      });
    };
  },
});
