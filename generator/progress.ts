/**
 * One status line for a command that takes seconds, rewritten in place — only
 * on a terminal. When stderr is a pipe or a file (tests, CI, a log), nothing is
 * written, so that output stays what it was.
 */
export interface Progress {
  /** Replaces the status line with `text`. */
  step(text: string): void;
  /** Clears the status line, leaving the terminal as it was. */
  done(): void;
}

const SILENT: Progress = { step() {}, done() {} };

export function progressLine(label: string, stream: Pick<NodeJS.WriteStream, 'write'> & { isTTY?: boolean } = process.stderr): Progress {
  if (stream.isTTY !== true) return SILENT;
  let shown = false;
  return {
    step(text) {
      // \r and "erase to end of line": the new text replaces the old, however long either is.
      stream.write(`\r\x1b[K${label}: ${text}`);
      shown = true;
    },
    done() {
      if (shown) stream.write('\r\x1b[K');
      shown = false;
    },
  };
}
