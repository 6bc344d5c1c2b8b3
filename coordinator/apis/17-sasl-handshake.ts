/**
 * SaslHandshake (key 17): the client names its SASL mechanism. Answered by the
 * connection's session (server/dispatch.ts, auth/session.ts), not by this handler:
 * the session owns the authentication state. The definition is here so that
 * ApiVersions advertises the API and its versions.
 *
 * Kafka: SaslServerAuthenticator (the handshake is answered by the channel's
 * authenticator, before KafkaApis).
 * - v0 is served: after it the tokens travel as bare frames, without Kafka headers
 *   (pre-KIP-152 clients; librdkafka requires v0 to be advertised).
 * Anyone may call it: it comes before authentication.
 */
import { SaslHandshakeRequest } from '../../generated/SaslHandshakeRequest.js';
import { SaslHandshakeResponse } from '../../generated/SaslHandshakeResponse.js';
import { allowAnyone, defineApi } from './define.js';

export default defineApi({
  request: SaslHandshakeRequest,
  response: SaslHandshakeResponse,
  authorize: allowAnyone(),
  handler: () => async () => {
    throw new Error('SaslHandshake is answered by the connection session (server/dispatch.ts), not by a handler');
  },
});
