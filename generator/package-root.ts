import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The kipgen package folder, found by walking up from this module: the same
 * code runs from the sources (generator/) and from the build (dist/generator/),
 * and needs templates/ and the spec-format schema from either place.
 */
export const PACKAGE_ROOT: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'templates', 'message.hbs'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('kipgen: cannot find its templates/ folder next to any parent of the generator');
    dir = parent;
  }
  return dir;
})();
