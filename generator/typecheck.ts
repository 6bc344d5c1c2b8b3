import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Project, ts } from 'ts-morph';
import { RUNTIME_PACKAGE } from './generate.js';
import { PACKAGE_ROOT } from './package-root.js';

/**
 * Where the runtime package's entry is for the type check: the installed
 * @kipgen/codecs this generator depends on, or, in a checkout (where it is not
 * installed), the runtime/ beside generator/. The output folder may not have
 * the package yet (it is installed after generating), so the check maps it.
 */
function runtimeEntry(): string | undefined {
  try {
    // Its declarations: a path mapped to an existing .js would be read as untyped JavaScript.
    return createRequire(import.meta.url)
      .resolve(RUNTIME_PACKAGE)
      .replace(/\.js$/, '.d.ts');
  } catch {
    const own = join(PACKAGE_ROOT, 'runtime', 'index.ts');
    return existsSync(own) ? join(PACKAGE_ROOT, 'runtime', 'index.js') : undefined;
  }
}

/**
 * Type-checks an emitted tree in memory before anything is written, so that a
 * generator bug or an exotic schema never leaves code on disk that does not compile.
 */
export function typecheck(files: ReadonlyMap<string, string>, runtimeModule?: string): string[] {
  const entry = runtimeModule === RUNTIME_PACKAGE ? runtimeEntry() : undefined;
  const project = new Project({
    compilerOptions: {
      strict: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ['node'],
      skipLibCheck: true,
      noEmit: true,
      ...(entry === undefined ? {} : { paths: { [RUNTIME_PACKAGE]: [entry] } }),
    },
    skipAddingFilesFromTsConfig: true,
  });
  const sources = [...files].map(([path, text]) => project.createSourceFile(path, text, { overwrite: true }));
  const problems: string[] = [];
  for (const source of sources) {
    for (const d of source.getPreEmitDiagnostics()) {
      const line = d.getLineNumber();
      const text = ts.flattenDiagnosticMessageText(d.compilerObject.messageText, '\n');
      problems.push(`${source.getFilePath()}${line === undefined ? '' : `:${line}`}: ${text}`);
    }
  }
  return problems;
}
