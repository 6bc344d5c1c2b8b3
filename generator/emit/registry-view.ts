import { pairByApiKey, type MessageSpec } from '../spec.js';
import { headerRanges } from '../wire-rules.js';

/** What templates/registry.hbs needs: every codec, and the APIs paired by key. */
export interface RegistryView {
  runtimeModule: string;
  messages: { name: string; module: string }[];
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
  return {
    runtimeModule,
    messages: [...specs].sort((a, b) => a.name.localeCompare(b.name)).map((s) => ({ name: s.name, module: `./${s.name}.js` })),
    apis,
  };
}
