import { relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const RUNTIME = resolve(fileURLToPath(new URL('../../runtime/index.js', import.meta.url)));

/**
 * The --runtime-import for code generated into a scratch folder that a test
 * then compiles or imports: this checkout's runtime, by relative path. (The
 * generator's default, `@kipgen/codecs/runtime`, is the installed package,
 * which a checkout's scratch folders cannot resolve.)
 */
export function checkoutRuntimeImport(out: string): string {
  const path = relative(resolve(out), RUNTIME).split(sep).join('/');
  return path.startsWith('.') ? path : `./${path}`;
}
