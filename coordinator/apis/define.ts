/**
 * What one API of the broker is: its generated request and response codecs, the
 * versions it serves, who may call it, and its handler — all typed by the codecs,
 * so a field renamed in a schema breaks the build here, not a client at run time.
 *
 * Every file of this folder but this one, services.ts and index.ts defines one API
 * (`NN-name.ts`, NN its API key, as franz-go's kfake lays out its handlers) and
 * exports it with `defineApi`. index.ts lists them; the broker serves exactly that
 * list (ApiVersions advertises it, dispatch uses it). As Kafka's KafkaApis does, a
 * definition checks the request's permissions and shapes the wire answer, and hands
 * the work to the domain folders (log/, txn/, group/, share/, admin/, auth/), which
 * take the typed request data as Kafka's coordinators take `…RequestData`.
 * The share coordinator is pluggable: its APIs call the typed operations of
 * broker-context.ts's ShareCoordinator and are served while one offering them is
 * registered (`needsShare`).
 */
import type { ApiMessageCodec } from '../../runtime/index.js';
import type { AuthorizationRule } from '../auth/rule-kit.js';
import type { RequestContext, ShareCoordinator } from '../broker-context.js';
import type { BrokerConfig } from '../config.js';
import type { BrokerServices } from './services.js';

/** Which operations of the share coordinator an API needs (ShareCoordinator.groups / .partitions / .offsets). */
export type ShareOperations = 'groups' | 'partitions' | 'offsets';

/** Whether `api` is served now: its config condition, and the share coordinator's operations it needs. */
export function isServed(api: BrokerApi, config: BrokerConfig, share: ShareCoordinator | null): boolean {
  return api.servedWhen(config) && (api.needsShare === undefined || share?.[api.needsShare] !== undefined);
}

/** Answers one decoded request of the API with its response body. */
export type ApiHandler<Req, Res> = (request: Req, ctx: RequestContext) => Promise<Res>;

export type { AuthorizationRule };

/** The versions served, when narrower than the codec's: `why` is the decision, shown in the docs. */
export interface ServedVersions {
  readonly min?: number;
  readonly max?: number;
  readonly why: string;
}

export interface ApiDefinition<Req, Res> {
  readonly request: ApiMessageCodec<Req, never>;
  readonly response: ApiMessageCodec<Res, never>;
  readonly versions?: ServedVersions;
  /** Whether this broker serves the API at all (e.g. KIP-1289's APIs only with kip1289 on); absent: always. */
  readonly servedWhen?: (config: BrokerConfig) => boolean;
  /**
   * The share coordinator's operations the handler calls (broker-context.ts): the API is
   * served only while a registered share coordinator offers them (a broker without one
   * neither advertises nor dispatches it), besides `servedWhen`.
   */
  readonly needsShare?: ShareOperations;
  /** Required: an API without an authorization rule cannot be defined. */
  readonly authorize: AuthorizationRule<Req, Res>;
  /** Builds the handler from the broker's parts, once at start-up. */
  readonly handler: (services: BrokerServices) => ApiHandler<Req, Res>;
}

/**
 * One API as the registry and the dispatcher hold it: the request type erased,
 * which is sound because the dispatcher only ever hands an API's handler and rule
 * what that API's own request codec decoded.
 */
export interface BrokerApi {
  readonly apiKey: number;
  readonly name: string;
  readonly request: ApiMessageCodec<unknown, unknown>;
  readonly response: ApiMessageCodec<unknown, unknown>;
  readonly versions: { readonly min: number; readonly max: number; readonly why?: string };
  readonly servedWhen: (config: BrokerConfig) => boolean;
  readonly needsShare: ShareOperations | undefined;
  readonly authorize: AuthorizationRule<unknown, unknown>;
  readonly handler: (services: BrokerServices) => ApiHandler<unknown, unknown>;
}

/** Defines one API, checking its codecs, versions and rule against each other. */
export function defineApi<Req, Res>(definition: ApiDefinition<Req, Res>): BrokerApi {
  const { request, response } = definition;
  if (request.apiKey !== response.apiKey) throw new Error(`${request.name} and ${response.name} are different APIs`);
  const range = request.validVersions;
  const min = definition.versions?.min ?? range.lowest;
  const max = definition.versions?.max ?? range.highest;
  if (min < range.lowest || max > range.highest || min > max) {
    throw new Error(`${request.name}: versions ${min}-${max} are outside the codec's ${range.lowest}-${range.highest}`);
  }
  const erased = definition as unknown as ApiDefinition<unknown, unknown>;
  return {
    apiKey: request.apiKey,
    name: request.name.replace(/Request$/, ''),
    request: erased.request,
    response: erased.response,
    versions: { min, max, ...(definition.versions ? { why: definition.versions.why } : {}) },
    servedWhen: definition.servedWhen ?? (() => true),
    needsShare: definition.needsShare,
    authorize: erased.authorize,
    handler: erased.handler,
  };
}

/** The rule of an API anyone may call, with the reason (ApiVersions, SASL: before authentication). */
export function allowAnyone<Req, Res>(): AuthorizationRule<Req, Res> {
  return (request, _check, _ctx, next) => next(request);
}
