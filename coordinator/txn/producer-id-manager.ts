/**
 * Hands out producer ids that are unique across the cluster and across
 * restarts, without a controller: ids come in blocks of BLOCK_SIZE, and node
 * i of n owns blocks i, i+n, i+2n, … The next unused block is persisted
 * (fsynced) before any id of the current block is handed out, so a crash can
 * waste ids but never reuse one. (Kafka gets blocks from the controller with
 * AllocateProducerIds; a static cluster can partition the space instead.)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic } from '../cluster.js';

const BLOCK_SIZE = 1000n;

export class ProducerIdManager {
  private readonly file: string;
  private nextBlock: bigint;
  private current = 0n;
  private end = 0n;

  constructor(
    dataDir: string,
    private readonly nodeIndex: number,
    private readonly nodeCount: number,
  ) {
    this.file = path.join(dataDir, 'producer-id-block.json');
    this.nextBlock = 0n;
    if (fs.existsSync(this.file)) {
      const parsed = JSON.parse(fs.readFileSync(this.file, 'utf8')) as { nextBlock: string };
      this.nextBlock = BigInt(parsed.nextBlock);
    }
  }

  /** Makes sure no id up to `producerId` is handed out again (ids seen in a replayed log). */
  reserveUpTo(producerId: bigint): void {
    while (this.blockStart(this.nextBlock) <= producerId) this.nextBlock++;
  }

  next(): bigint {
    if (this.current >= this.end) {
      const start = this.blockStart(this.nextBlock);
      this.nextBlock++;
      writeFileAtomic(this.file, JSON.stringify({ nextBlock: this.nextBlock.toString() }) + '\n');
      this.current = start;
      this.end = start + BLOCK_SIZE;
    }
    return this.current++;
  }

  private blockStart(localBlock: bigint): bigint {
    return (localBlock * BigInt(this.nodeCount) + BigInt(this.nodeIndex)) * BLOCK_SIZE;
  }
}
