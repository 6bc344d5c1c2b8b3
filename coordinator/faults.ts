/**
 * Test-only fault injection: `KIPGEN_FAULT=<point>` makes the broker kill
 * itself with SIGKILL (like `kill -9`: no cleanup; what the logs wrote is in
 * the page cache, fsynced or not) the first time it reaches that point. Several points may
 * be given, comma-separated. Points (coordinator/README.md lists them too):
 *
 * - `crash-after-prepare-commit`  PREPARE_COMMIT written to __transaction_state, no marker sent yet
 * - `crash-after-prepare-abort`   PREPARE_ABORT written, no marker sent yet
 * - `crash-before-complete`       every marker acknowledged, COMPLETE_* not yet written
 * - `crash-after-marker-append`   a partition leader appended a marker but has not applied it
 *                                 (__consumer_offsets / __share_group_state) nor acknowledged it
 */
export type FaultPoint = 'crash-after-prepare-commit' | 'crash-after-prepare-abort' | 'crash-before-complete' | 'crash-after-marker-append';

const armed = new Set(
  (process.env.KIPGEN_FAULT ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

export function maybeCrash(point: FaultPoint, log: (line: string) => void): void {
  if (!armed.has(point)) return;
  log(`KIPGEN_FAULT: crashing at ${point}`);
  process.kill(process.pid, 'SIGKILL');
}
