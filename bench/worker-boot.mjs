// Entry of the benchmark's worker threads: tsx's `--import tsx` hooks do not reach worker
// threads on Node 20, so register them here, then load the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
await import(new URL('./worker.ts', import.meta.url).href);
