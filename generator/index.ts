/**
 * The generator as a library (the `kipgen` package): what `kipgen generate`
 * and `kipgen check` do, callable from a build script.
 */
export {
  compareTree,
  defaultRuntimeImport,
  generate,
  RUNTIME_PACKAGE,
  writeTree,
  type GenerateOptions,
  type GenerateResult,
  type StaleReport,
} from './generate.js';
export { formatDiagnostic, type Diagnostic } from './diagnostics.js';
