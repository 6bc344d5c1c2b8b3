/**
 * SaslAuthenticate (key 36): one SASL token exchange. Answered by the connection's
 * session (server/dispatch.ts, auth/session.ts, auth/sasl-server.ts), not by this
 * handler: the session owns the authentication state. The definition is here so
 * that ApiVersions advertises the API and its versions.
 *
 * Kafka: SaslServerAuthenticator.handleSaslToken.
 * - v1+ carries the session lifetime (KIP-368 re-authentication).
 * Anyone may call it: it comes before authentication.
 */
import { SaslAuthenticateRequest } from '../../generated/SaslAuthenticateRequest.js';
import { SaslAuthenticateResponse } from '../../generated/SaslAuthenticateResponse.js';
import { allowAnyone, defineApi } from './define.js';

export default defineApi({
  request: SaslAuthenticateRequest,
  response: SaslAuthenticateResponse,
  authorize: allowAnyone(),
  handler: () => async () => {
    throw new Error('SaslAuthenticate is answered by the connection session (server/dispatch.ts), not by a handler');
  },
});
