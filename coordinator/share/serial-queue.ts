/**
 * Runs tasks one at a time, in order. The share coordinator changes state and
 * writes it to the log inside one task, so that no other request sees (or
 * changes) state between the check, the write and the reply — the single
 * writer that Kafka's coordinator runtime gives each shard.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T> | T): Promise<T> {
    const result = this.tail.then(task, task);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves once every task queued so far has finished. */
  async drain(): Promise<void> {
    await this.tail;
  }
}
