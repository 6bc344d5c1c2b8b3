import { pairByApiKey, type MessageSpec } from '../spec.js';
import { headerRanges } from '../wire-rules.js';
import { emittedStructs } from './message-view.js';

/** What templates/registry.hbs needs: every codec, and the APIs paired by key. */
export interface RegistryView {
  runtimeModule: string;
  messages: { name: string; module: string }[];
  /** Per module, the builders and struct types re-exported from index.ts (`createMetadataRequestTopic`, …). */
  builders: { module: string; names: string }[];
  apis: {
    apiKey: number;
    name: string;
    request: string;
    response: string;
    listeners: string;
    latestVersionUnstable: boolean;
    validVersions: string;
    requestHeaders: string;
    responseHeaders: string;
  }[];
}

/** Header versions as code: `[{ lowest: 0, highest: 2, header: 1 }, …]`. */
function headersCode(spec: MessageSpec): string {
  return `[${headerRanges(spec)
    .map((r) => `{ lowest: ${r.versions.lowest}, highest: ${r.versions.highest}, header: ${r.header} }`)
    .join(', ')}]`;
}

export function registryView(specs: MessageSpec[], runtimeModule: string): RegistryView {
  const byKey = pairByApiKey(specs);
  const apis = [...byKey.entries()]
    .filter(([, pair]) => pair.request !== undefined && pair.response !== undefined)
    .sort(([a], [b]) => a - b)
    .map(([apiKey, pair]) => ({
      apiKey,
      name: pair.request!.name.replace(/Request$/, ''),
      request: pair.request!.name,
      response: pair.response!.name,
      listeners: JSON.stringify(pair.request!.listeners),
      latestVersionUnstable: pair.request!.latestVersionUnstable,
      validVersions: `{ lowest: ${pair.request!.validVersions.lowest}, highest: ${pair.request!.validVersions.highest} }`,
      requestHeaders: headersCode(pair.request!),
      responseHeaders: headersCode(pair.response!),
    }));
  const sorted = [...specs].sort((a, b) => a.name.localeCompare(b.name));
  return {
    runtimeModule,
    messages: sorted.map((s) => ({ name: s.name, module: `./${s.name}.js` })),
    builders: builders(sorted),
    apis,
  };
}

/**
 * The nested builders and struct types, so that users reach them from the
 * package root: `create<Message>` for every message, and `create<Struct>` and
 * the `<Struct>` type for every nested struct whose name no other module (and
 * no message) uses. A name two modules declare (Kafka reuses a few struct
 * names) would make the root's exports ambiguous: those stay in their module.
 */
// With each, its create input type (`<Message>Init`, `<Struct>Init`).
function builders(specs: MessageSpec[]): { module: string; names: string }[] {
  const nested = new Map(specs.map((spec) => [spec.name, emittedStructs(spec).map((s) => s.name)]));
  const uses = new Map<string, number>();
  for (const spec of specs) uses.set(spec.name, (uses.get(spec.name) ?? 0) + 1);
  for (const names of nested.values()) for (const name of names) uses.set(name, (uses.get(name) ?? 0) + 1);
  return specs.map((spec) => {
    const structs = nested.get(spec.name)!.filter((name) => uses.get(name) === 1);
    const names = [
      `create${spec.name}`,
      ...structs.map((name) => `create${name}`),
      ...structs.map((name) => `type ${name}`),
      // What each create takes (a partial at any depth).
      `type ${spec.name}Init`,
      ...structs.map((name) => `type ${name}Init`),
    ];
    return { module: `./${spec.name}.js`, names: names.join(', ') };
  });
}
