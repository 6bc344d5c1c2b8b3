/**
 * The fields of a whole-request error answer beyond its error code, where
 * Kafka's per-API getErrorResponse sets them to "none" rather than leaving
 * the schema's defaults (0): InitProducerIdRequest.getErrorResponse (no
 * producer id, no epoch), FindCoordinatorRequest.getErrorResponse before v4
 * (Node.noNode(): node -1, host "", port -1).
 */
import { ApiKey } from '../../generated/index.js';

export function fillErrorBody(apiKey: number, apiVersion: number, body: Record<string, unknown>): void {
  if (apiKey === ApiKey.InitProducerId) {
    body.producerId = -1n;
    body.producerEpoch = -1;
  } else if (apiKey === ApiKey.FindCoordinator && apiVersion < 4) {
    body.nodeId = -1;
    body.host = '';
    body.port = -1;
  }
}
