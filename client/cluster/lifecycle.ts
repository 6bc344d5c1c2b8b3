/** Whether a client is closed, shared by its parts: what they check before work and what long waits listen to. */
import { ClientClosedError } from '../errors.js';

export class ClientLifecycle {
  private readonly closer = new AbortController();

  constructor(private readonly clientId: string) {}

  get closed(): boolean {
    return this.closer.signal.aborted;
  }

  /** Aborted when the client closes. */
  get signal(): AbortSignal {
    return this.closer.signal;
  }

  checkOpen(): void {
    if (this.closed) throw this.closedError();
  }

  closedError(): ClientClosedError {
    return new ClientClosedError(`client ${this.clientId}`);
  }

  /** Marks the client closed; false when it already was. */
  close(): boolean {
    if (this.closed) return false;
    this.closer.abort();
    return true;
  }
}
