import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { LOG_OVERHEAD, controlRecordBatch, decodeRecordBatch, encodeRecordBatch, readBatchHeader, type RecordBatch } from '../../runtime/index.js';
import type { AppendResult, CoordinatorRecord, TransactionalProducer } from '../broker-context.js';
import type { StateLog } from './state-log.js';

/**
 * A StateLog over one append-only file of RecordBatch v2 batches: what the
 * share coordinator uses when it runs without the broker's partition logs
 * (its own tests, tools). Offsets are assigned on append; every append is
 * fsynced before it resolves; opening truncates a torn or corrupt tail at the
 * last whole batch whose CRC checks, as the broker's logs do at startup.
 * `appendMarker` writes a COMMIT/ABORT control batch, as WriteTxnMarkers does.
 * It does not check transactions with a transaction coordinator (the broker's
 * log does): a transactional append is taken as is.
 */
export class StandaloneStateLog implements StateLog {
  private nextOffset = 0n;
  private size = 0;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly path: string,
    private readonly file: FileHandle,
  ) {}

  static async open(path: string): Promise<StandaloneStateLog> {
    const file = await open(path, constants.O_RDWR | constants.O_CREAT);
    const log = new StandaloneStateLog(path, file);
    await log.recoverTail();
    return log;
  }

  append(records: readonly CoordinatorRecord[], transaction?: TransactionalProducer): Promise<AppendResult> {
    return this.serially((baseOffset) =>
      encodeRecordBatch({
        baseOffset,
        baseTimestamp: BigInt(Date.now()),
        isTransactional: transaction !== undefined,
        producerId: transaction?.producerId ?? -1n,
        producerEpoch: transaction?.producerEpoch ?? -1,
        records: records.map((r) => ({ key: r.key, value: r.value })),
      }),
    );
  }

  appendMarker(producerId: bigint, producerEpoch: number, commit: boolean): Promise<AppendResult> {
    return this.serially((baseOffset) =>
      controlRecordBatch({
        type: commit ? 'COMMIT' : 'ABORT',
        producerId,
        producerEpoch,
        coordinatorEpoch: 0,
        timestamp: BigInt(Date.now()),
        baseOffset,
      }),
    );
  }

  /** Every batch in the file, decoded, markers included. Reads the file as it is now: call it between appends. */
  *batches(fromOffset = 0n): Iterable<RecordBatch> {
    const bytes = readFileSync(this.path);
    for (let at = 0; at + LOG_OVERHEAD <= bytes.length && at < this.size;) {
      const batch = decodeRecordBatch(bytes, at);
      at += batch.sizeInBytes;
      if (batch.lastOffset >= fromOffset) yield batch;
    }
  }

  async close(): Promise<void> {
    await this.queue.catch(() => undefined);
    await this.file.close();
  }

  private serially(encode: (baseOffset: bigint) => Uint8Array): Promise<AppendResult> {
    const run = async (): Promise<AppendResult> => {
      const baseOffset = this.nextOffset;
      const batch = encode(baseOffset);
      const { lastOffset } = readBatchHeader(batch);
      await this.file.write(batch, 0, batch.length, this.size);
      await this.file.datasync();
      this.size += batch.length;
      this.nextOffset = lastOffset + 1n;
      return { baseOffset, lastOffset };
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async readAll(): Promise<Uint8Array> {
    const { size } = await this.file.stat();
    const bytes = Buffer.alloc(size);
    if (size > 0) await this.file.read(bytes, 0, size, 0);
    return bytes;
  }

  /** Finds the end of the last good batch and cuts the file there. */
  private async recoverTail(): Promise<void> {
    const bytes = await this.readAll();
    let at = 0;
    let nextOffset = 0n;
    while (at + LOG_OVERHEAD <= bytes.length) {
      try {
        const batch = decodeRecordBatch(bytes, at);
        at += batch.sizeInBytes;
        nextOffset = batch.lastOffset + 1n;
      } catch {
        break; // a torn write or corruption: everything from here on is cut
      }
    }
    if (at < bytes.length) {
      await this.file.truncate(at);
      await this.file.datasync();
    }
    this.size = at;
    this.nextOffset = nextOffset;
  }
}
