import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import * as prettier from 'prettier';
import type { MessageView } from './emit/message-view.js';
import type { RegistryView } from './emit/registry-view.js';
import { PACKAGE_ROOT } from './package-root.js';

/** Renders views through the Handlebars templates in templates/ and formats the result with Prettier. */

function load(name: string): string {
  return readFileSync(join(PACKAGE_ROOT, 'templates', `${name}.hbs`), 'utf8');
}

const handlebars = Handlebars.create();
handlebars.registerHelper('join', (items: string[]) => items.join(', '));
handlebars.registerHelper('article', (word: string) => (/^[AEIOU]/.test(word) ? 'An' : 'A'));
handlebars.registerPartial('structDeclarations', load('struct-declarations'));
handlebars.registerPartial('structFunctions', load('struct-functions'));
const messageTemplate = handlebars.compile<MessageView>(load('message'), { noEscape: true, strict: true });
const registryTemplate = handlebars.compile<RegistryView>(load('registry'), { noEscape: true, strict: true });

/** Formatting settings of the generated tree, fixed here so that output never depends on a user's Prettier config. */
const PRETTIER_OPTIONS: prettier.Options = {
  parser: 'typescript',
  printWidth: 120,
  singleQuote: true,
  trailingComma: 'all',
};

export async function renderMessage(view: MessageView): Promise<string> {
  return format(renderMessageSource(view));
}

/** The module's text before Prettier (bench:generate times the two apart). */
export function renderMessageSource(view: MessageView): string {
  return messageTemplate({ ...view, RUNTIME_IMPORTS: runtimeImports(view) } as MessageView);
}

/** Imports the runtime names the view registered as it emitted code, values and types apart. */
function runtimeImports(view: MessageView): string {
  const types = view.runtimeNames.filter((n) => view.typeOnlyRuntimeNames.includes(n));
  const values = view.runtimeNames.filter((n) => !view.typeOnlyRuntimeNames.includes(n));
  const lines: string[] = [];
  if (values.length > 0) lines.push(`import { ${values.join(', ')} } from '${view.runtimeModule}';`);
  if (types.length > 0) lines.push(`import type { ${types.join(', ')} } from '${view.runtimeModule}';`);
  return lines.join('\n');
}

export async function renderRegistry(view: RegistryView): Promise<string> {
  return format(registryTemplate(view));
}

export async function format(source: string): Promise<string> {
  try {
    return await prettier.format(source, PRETTIER_OPTIONS);
  } catch (error) {
    // Unformattable output is a generator bug; show the source so it can be found.
    throw new Error(`internal error: generated code does not parse: ${(error as Error).message}\n${source}`);
  }
}
