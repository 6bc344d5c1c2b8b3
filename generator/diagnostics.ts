/** A problem found in a schema file, located for a person to fix. */
export interface Diagnostic {
  severity: 'error' | 'warning';
  file: string;
  line: number;
  column: number;
  /** e.g. `fields[3].fields[0].tag` */
  jsonPath: string;
  message: string;
}

export function formatDiagnostic(d: Diagnostic): string {
  const where = d.jsonPath ? ` (at ${d.jsonPath})` : '';
  return `${d.file}:${d.line}:${d.column}: ${d.severity}: ${d.message}${where}`;
}

/** One or more errors that stop generation. */
export class SchemaError extends Error {
  override name = 'SchemaError';
  constructor(readonly diagnostics: Diagnostic[]) {
    super(diagnostics.map(formatDiagnostic).join('\n'));
  }
}
