import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode, errorCodeName, errorName, isRetriableErrorCode } from '../../runtime/error-codes.js';
import { sharedDir } from '../support/vectors.js';

describe('Kafka error codes', () => {
  it('name codes, format them for messages and know which are retriable', () => {
    expect(ErrorCode.NONE).toBe(0);
    expect(ErrorCode.NOT_COORDINATOR).toBe(16);
    expect(ErrorCode.INVALID_RECORD_STATE).toBe(121);
    expect(errorCodeName(ErrorCode.PRODUCER_FENCED)).toBe('PRODUCER_FENCED (90)');
    expect(errorCodeName(9999)).toBe('UNKNOWN_ERROR_CODE (9999)');
    expect(errorName(-1)).toBe('UNKNOWN_SERVER_ERROR');
    expect(isRetriableErrorCode(ErrorCode.NOT_COORDINATOR)).toBe(true);
    expect(isRetriableErrorCode(ErrorCode.CONCURRENT_TRANSACTIONS)).toBe(true);
    expect(isRetriableErrorCode(ErrorCode.PRODUCER_FENCED)).toBe(false);
    expect(isRetriableErrorCode(9999)).toBe(false);
  });

  const shared = sharedDir();
  if (shared === undefined) console.warn('error-codes: ../shared not found (set KIPGEN_SHARED): the table is NOT checked against kafka-facts in this run');
  it.runIf(shared !== undefined)('agree with every row of kafka-facts/error-codes.tsv', () => {
    const rows = readFileSync(join(shared!, 'kafka-facts', 'error-codes.tsv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1);
    expect(rows.length).toBeGreaterThan(100);
    for (const row of rows) {
      const [code, name, , retriable] = row.split('\t');
      expect([name, errorName(Number(code)), isRetriableErrorCode(Number(code))]).toEqual([name, name, retriable === 'yes']);
    }
  });
});
