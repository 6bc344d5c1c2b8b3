import { pairByApiKey, type MessageSpec } from '../spec.js';

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
  }[];
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
    }));
  return {
    runtimeModule,
    messages: [...specs].sort((a, b) => a.name.localeCompare(b.name)).map((s) => ({ name: s.name, module: `./${s.name}.js` })),
    apis,
  };
}
