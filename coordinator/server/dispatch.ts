/**
 * One request, from its frame to its response frame: header decode, version
 * checks, the SASL exchange, the authorizer hook, the handler, and a
 * BrokerError turned into an error body.
 *
 * A frame that cannot be served — malformed header or body, an API or version
 * not served, one the session refuses before authentication — throws a
 * RejectedFrame, which the connection logs in one line before closing (that
 * connection only). The one exception is ApiVersions, which answers an
 * unsupported version with a v0 body carrying UNSUPPORTED_VERSION and its own
 * version range (KIP-511).
 *
 * SaslHandshake and SaslAuthenticate are answered by the connection's
 * ConnectionSession (coordinator/auth/session.ts), not by a handler; the
 * authorizer hook (`authorize`) is consulted for every other request before
 * its handler.
 */
import { ApiKey, ApiVersionsResponse, RequestHeader, ResponseHeader, apiByKey } from '../../generated/index.js';
import { Reader, encodeFrameChunks, type ApiMessageCodec } from '../../runtime/index.js';
import type { RequestContext } from '../broker-context.js';
import { ErrorCode, BrokerError, errorCodeName } from '../errors.js';
import type { ConnectionSession } from '../auth/session.js';
import { fillErrorBody } from './error-bodies.js';
import { decodedCost, type RequestMemoryPool } from './request-budget.js';
import type { ServerOptions } from './server-options.js';

const SASL_HANDSHAKE_KEY: number = ApiKey.SaslHandshake;
const SASL_AUTHENTICATE_KEY: number = ApiKey.SaslAuthenticate;
const API_VERSIONS_KEY: number = ApiKey.ApiVersions;
export const PRODUCE_KEY: number = ApiKey.Produce;

/** A request or response body as the dispatcher holds it. */
type WireMessage = Record<string, unknown>;

/** Thrown by the dispatcher to reject a frame: the connection logs it, then closes. */
export class RejectedFrame extends Error {}

/** What the dispatcher needs of the connection its requests come on. */
export interface RequestSource {
  readonly id: number;
  readonly peer: string;
  /** The client's address as Kafka (Java) writes it, for ACL host matching (RequestContext.clientHost). */
  readonly clientHost: string;
  readonly listenerName: string;
  readonly session: ConnectionSession;
  /** RequestContext.onClose: one function per connection, so no request makes its own. */
  readonly onClose: (callback: () => void) => void;
  /** SaslAuthenticate succeeded: the authentication deadline no longer applies. */
  authenticated(): void;
}

/** One per connection: decodes, dispatches and encodes that connection's requests, one at a time. */
export class RequestDispatcher {
  /** APIs (name@clientId) whose trailing bytes this connection already logged: one line each, not one per request. */
  private readonly trailingLogged = new Set<string>();
  /** Null without a request budget: nothing is taken from or given back to a pool. */
  private readonly pool: RequestMemoryPool | null;
  /** Array elements one request may create; Infinity (Reader's own default) without a budget. */
  private readonly elementBudget: number;
  /** What the request being handled holds of the pool, until its response is written. */
  private heldBytes = 0;

  constructor(
    private readonly options: ServerOptions,
    private readonly source: RequestSource,
  ) {
    this.pool = options.budget?.pool ?? null;
    this.elementBudget = options.budget?.elementBudget ?? Infinity;
  }

  /** Gives the handled request's memory back to the pool (its response is written, or none is due). */
  releaseHeld(): void {
    if (this.heldBytes === 0 || this.pool === null) return;
    this.pool.release(this.heldBytes);
    this.heldBytes = 0;
  }

  private logTrailingBytes(apiName: string, apiVersion: number, clientId: string | null, count: number): void {
    const key = `${apiName}@${clientId ?? ''}`;
    if (this.trailingLogged.has(key)) return;
    this.trailingLogged.add(key);
    this.options.log(
      `connection ${this.source.id} (${this.source.peer}) client ${JSON.stringify(clientId)}: ${apiName} v${apiVersion} request has ${count} byte(s) after its body; ignored, as Kafka does (logged once per connection and API)`,
    );
  }

  /** Decodes, dispatches and encodes one request; null when no response is due (Produce acks=0). */
  async handle(frame: Uint8Array): Promise<Uint8Array[] | null> {
    const source = this.source;
    const session = source.session;
    if (session.rawTokens) {
      // After SaslHandshake v0 the tokens travel as bare frames, without Kafka headers (pre-KIP-152 clients).
      const result = await session.authenticate(frame);
      if (result.errorCode !== 0) throw new RejectedFrame(result.errorMessage ?? 'SASL authentication failed');
      const size = Buffer.alloc(4);
      size.writeInt32BE(result.authBytes.length);
      return [size, result.authBytes];
    }
    if (frame.length < 8) throw new RejectedFrame(`frame of ${frame.length} bytes is too short for a request header`);
    const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
    const apiKey = view.getInt16(0);
    const apiVersion = view.getInt16(2);
    const correlationId = view.getInt32(4);
    const { registry, metrics } = this.options;
    const registered = registry.get(apiKey);
    const api = registered?.api ?? apiByKey(apiKey);
    const refusal = session.refusal(apiKey, api?.name.replace(/Request$/, '') ?? `API key ${apiKey}`);
    if (refusal !== null) throw new RejectedFrame(`${refusal} (correlation id ${correlationId})`);
    if (registered === undefined || api === undefined) {
      throw new RejectedFrame(`API key ${apiKey}${api ? ` (${api.name})` : ''} is not served by this broker (correlation id ${correlationId})`);
    }
    if (apiVersion < registered.minVersion || apiVersion > registered.maxVersion) {
      if (apiKey === API_VERSIONS_KEY) {
        metrics.countRequest(api.name, apiVersion);
        metrics.countError(ErrorCode.UNSUPPORTED_VERSION);
        if (this.options.logRequests) {
          // The client id sits at the same place in request headers v1 and v2.
          let clientId: string | null = null;
          try {
            clientId = RequestHeader.read(new Reader(frame), 1).clientId;
          } catch {
            /* unreadable: logged as null */
          }
          this.options.log(
            `connection ${source.id}: ${api.name} v${apiVersion} correlation ${correlationId} client ${JSON.stringify(clientId)} (unsupported: answered with v0)`,
          );
        }
        // Only ApiVersions' own range, as Kafka's ApiVersionsRequest.getErrorResponse: what the client needs to retry.
        const body = ApiVersionsResponse.create({
          errorCode: ErrorCode.UNSUPPORTED_VERSION,
          apiKeys: registry.advertised().filter((k) => k.apiKey === API_VERSIONS_KEY),
        });
        return encodeFrameChunks(ResponseHeader, ResponseHeader.create({ correlationId }), 0, ApiVersionsResponse, body, 0);
      }
      throw new RejectedFrame(
        `${api.name} v${apiVersion} is not supported (served: v${registered.minVersion}-${registered.maxVersion}, correlation id ${correlationId})`,
      );
    }
    // The dispatcher sees every API's messages as plain objects: a decoded request only
    // ever reaches its own API's handler, whose definition (apis/) is typed.
    const requestCodec = api.request as ApiMessageCodec<WireMessage, WireMessage>;
    const responseCodec = api.response as ApiMessageCodec<WireMessage, WireMessage>;
    const reader = new Reader(frame);
    reader.elementBudget = this.elementBudget;
    let header: { clientId: string | null; correlationId: number };
    let request: unknown;
    try {
      header = RequestHeader.read(reader, requestCodec.headerVersion(apiVersion));
      // Bytes after the body are ignored, as Kafka's broker does (docs/DESIGN.md §6):
      // librdkafka 2.15's all-topics Metadata v13 request carries 3 of them.
      // The body is read from the header's reader: no second reader or closure per request.
      request = requestCodec.read(reader, apiVersion);
      if (reader.remaining > 0) this.logTrailingBytes(api.name, apiVersion, header.clientId, reader.remaining);
    } catch (error) {
      throw new RejectedFrame(`malformed ${api.name} v${apiVersion} request (correlation id ${correlationId}): ${(error as Error).message}`);
    }
    if (this.pool !== null) {
      this.heldBytes = decodedCost(frame.length, this.elementBudget - reader.elementBudget);
      this.pool.take(this.heldBytes);
    }
    metrics.countRequest(api.name, apiVersion);
    if (this.options.logRequests) {
      this.options.log(`connection ${source.id}: ${api.name} v${apiVersion} correlation ${header.correlationId} client ${JSON.stringify(header.clientId)}`);
    }
    const ctx: RequestContext = {
      apiKey,
      apiVersion,
      header: { clientId: header.clientId, correlationId: header.correlationId },
      connectionId: source.id,
      peer: source.peer,
      principal: session.principal,
      clientHost: source.clientHost,
      listener: source.listenerName,
      onClose: source.onClose,
    };
    let body: WireMessage;
    try {
      if (apiKey === SASL_HANDSHAKE_KEY) {
        body = responseCodec.create(session.handshake((request as { mechanism: string }).mechanism, apiVersion) as unknown as WireMessage);
      } else if (apiKey === SASL_AUTHENTICATE_KEY) {
        body = responseCodec.create((await session.authenticate((request as { authBytes: Uint8Array }).authBytes)) as unknown as WireMessage);
        if (session.authenticated && body.errorCode === 0 && body.authBytes !== undefined) source.authenticated();
      } else {
        const authorize = this.options.authorize;
        body = (
          authorize ? await authorize(request, ctx, (r) => registered.handler(r, ctx), registered.authorize) : await registered.handler(request, ctx)
        ) as WireMessage;
        if (apiKey === API_VERSIONS_KEY && body.errorCode === ErrorCode.NONE) session.apiVersionsAnswered();
      }
    } catch (error) {
      if (!(error instanceof BrokerError)) throw error;
      // A handler may throw a BrokerError to answer with a top-level error code.
      body = responseCodec.create();
      if (!('errorCode' in body)) throw new Error(`${api.name} has no top-level error code to carry ${errorCodeName(error.code)}: ${error.message}`);
      body.errorCode = error.code;
      if ('errorMessage' in body) body.errorMessage = error.message;
      fillErrorBody(apiKey, apiVersion, body);
    }
    if (apiKey === PRODUCE_KEY && (request as { acks: number }).acks === 0) return null;
    metrics.countResponseErrors(body);
    const responseHeader = ResponseHeader.create({ correlationId: header.correlationId });
    return encodeFrameChunks(ResponseHeader, responseHeader, responseCodec.headerVersion(apiVersion), responseCodec, body, apiVersion);
  }
}
