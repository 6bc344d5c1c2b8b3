import { Project, ts } from 'ts-morph';

/**
 * Type-checks an emitted tree in memory before anything is written, so that a
 * generator bug or an exotic schema never leaves code on disk that does not compile.
 */
export function typecheck(files: ReadonlyMap<string, string>): string[] {
  const project = new Project({
    compilerOptions: {
      strict: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ['node'],
      skipLibCheck: true,
      noEmit: true,
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
