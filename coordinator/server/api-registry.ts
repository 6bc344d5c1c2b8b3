/**
 * Which APIs this broker serves, in which versions, and by which handler.
 * ApiVersions advertises exactly this table, so registration is the single
 * place where an API is turned on.
 */
import { apiByKey, type ApiDescriptor } from '../../generated/index.js';
import type { Handler } from '../broker-context.js';
import type { AuthorizationRule } from '../auth/rule-kit.js';

export interface RegisteredApi {
  readonly api: ApiDescriptor;
  readonly minVersion: number;
  readonly maxVersion: number;
  readonly handler: Handler;
  /** The API's own authorization rule (apis/); absent for APIs not yet defined there, whose rule is in auth/api-acls.ts. */
  readonly authorize?: AuthorizationRule<unknown, unknown>;
}

export class ApiRegistry {
  private readonly apis = new Map<number, RegisteredApi>();

  /**
   * Serves `apiKey` with `handler`, in the codec's full version range unless
   * narrowed (a narrower range is a decision to document in coordinator/README.md).
   */
  register(apiKey: number, handler: Handler, versions?: { min?: number; max?: number }, authorize?: AuthorizationRule<unknown, unknown>): void {
    const api = apiByKey(apiKey);
    if (api === undefined) throw new Error(`no generated codec for API key ${apiKey}`);
    const range = api.request.validVersions;
    const minVersion = versions?.min ?? range.lowest;
    const maxVersion = versions?.max ?? range.highest;
    if (minVersion < range.lowest || maxVersion > range.highest || minVersion > maxVersion) {
      throw new Error(`${api.name}: versions ${minVersion}-${maxVersion} are outside the codec's ${range.lowest}-${range.highest}`);
    }
    this.apis.set(apiKey, { api, minVersion, maxVersion, handler, ...(authorize ? { authorize } : {}) });
  }

  unregister(apiKey: number): void {
    this.apis.delete(apiKey);
  }

  get(apiKey: number): RegisteredApi | undefined {
    return this.apis.get(apiKey);
  }

  /** Sorted by API key, for ApiVersionsResponse.ApiKeys. */
  advertised(): { apiKey: number; minVersion: number; maxVersion: number }[] {
    return [...this.apis.values()]
      .map((a) => ({ apiKey: a.api.apiKey, minVersion: a.minVersion, maxVersion: a.maxVersion }))
      .sort((a, b) => a.apiKey - b.apiKey);
  }
}
