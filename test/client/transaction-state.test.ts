import { describe, expect, it } from 'vitest';
import { IllegalStateError, ProducerFencedError, TransactionAbortableError } from '../../client/errors.js';
import { TRANSACTION_STATES, TransactionStateMachine, type TransactionState } from '../../client/transactions/state.js';

type Pair = `${TransactionState}->${TransactionState}`;

/**
 * Kafka's TransactionManager.State.isTransitionValid (clients/.../producer/internals/TransactionManager.java),
 * target ← sources, without PREPARED_TRANSACTION (this client keeps a prepared transaction IN_TRANSACTION).
 */
const KAFKA: Record<TransactionState, TransactionState[]> = {
  UNINITIALIZED: ['READY', 'ABORTABLE_ERROR'],
  INITIALIZING: ['UNINITIALIZED', 'COMMITTING_TRANSACTION', 'ABORTING_TRANSACTION'],
  READY: ['INITIALIZING', 'COMMITTING_TRANSACTION', 'ABORTING_TRANSACTION'],
  IN_TRANSACTION: ['READY'],
  COMMITTING_TRANSACTION: ['IN_TRANSACTION'],
  ABORTING_TRANSACTION: ['IN_TRANSACTION', 'ABORTABLE_ERROR'],
  ABORTABLE_ERROR: ['IN_TRANSACTION', 'COMMITTING_TRANSACTION', 'ABORTABLE_ERROR', 'INITIALIZING'],
  FATAL_ERROR: [...TRANSACTION_STATES],
};

/** Where this client differs from Kafka's table, and why (client/transactions/state.ts). */
const ADDED: Pair[] = [
  'INITIALIZING->INITIALIZING', // initTransactions() again after a timeout retries
  // Allowed but never taken: no call of this client returns to UNINITIALIZED.
  'UNINITIALIZED->UNINITIALIZED',
  'INITIALIZING->UNINITIALIZED',
];
const REMOVED: Pair[] = [
  'COMMITTING_TRANSACTION->INITIALIZING', // only an abort bumps the epoch here
  'INITIALIZING->ABORTABLE_ERROR', // a failed InitProducerId is fatal here
  'ABORTABLE_ERROR->UNINITIALIZED', // Kafka's transitionToUninitialized; this client never returns there
];

/** A legal walk from UNINITIALIZED to each state. */
const WALK: Record<TransactionState, TransactionState[]> = {
  UNINITIALIZED: [],
  INITIALIZING: ['INITIALIZING'],
  READY: ['INITIALIZING', 'READY'],
  IN_TRANSACTION: ['INITIALIZING', 'READY', 'IN_TRANSACTION'],
  COMMITTING_TRANSACTION: ['INITIALIZING', 'READY', 'IN_TRANSACTION', 'COMMITTING_TRANSACTION'],
  ABORTING_TRANSACTION: ['INITIALIZING', 'READY', 'IN_TRANSACTION', 'ABORTING_TRANSACTION'],
  ABORTABLE_ERROR: ['INITIALIZING', 'READY', 'IN_TRANSACTION', 'ABORTABLE_ERROR'],
  FATAL_ERROR: ['FATAL_ERROR'],
};

function machineIn(state: TransactionState, onFatal = (): void => undefined): TransactionStateMachine {
  const machine = new TransactionStateMachine('tx-1', onFatal);
  for (const step of WALK[state]) machine.transitionTo(step, new Error(`entering ${step}`));
  expect(machine.state).toBe(state);
  return machine;
}

describe('the transaction state machine', () => {
  const legal = new Set<Pair>(Object.entries(KAFKA).flatMap(([to, sources]) => sources.map((from) => `${from}->${to}` as Pair)));
  for (const pair of ADDED) legal.add(pair);
  for (const pair of REMOVED) legal.delete(pair);

  it("allows exactly Kafka's transitions and the listed differences, for every pair of states", () => {
    for (const from of TRANSACTION_STATES) {
      for (const to of TRANSACTION_STATES) {
        const machine = machineIn(from);
        const before = machine.lastError;
        const error = (() => {
          try {
            machine.transitionTo(to, new Error('cause'));
            return null;
          } catch (e) {
            return e;
          }
        })();
        const pair: Pair = `${from}->${to}`;
        if (legal.has(pair)) {
          expect(error, pair).toBeNull();
          expect(machine.state, pair).toBe(to);
        } else {
          expect(error, pair).toBeInstanceOf(IllegalStateError);
          expect((error as Error).message, pair).toContain(`invalid transition from ${from} to ${to}`);
          expect(machine.state, `${pair} leaves the state`).toBe(from);
          expect(machine.lastError, `${pair} leaves the error`).toBe(before);
        }
      }
    }
  });

  it('keeps the error only in ABORTABLE_ERROR and FATAL_ERROR, and tells of each entry into FATAL_ERROR', () => {
    let fatal = 0;
    const machine = machineIn('IN_TRANSACTION', () => fatal++);
    expect(machine.lastError).toBeNull();
    const abortable = new Error('partition add failed');
    machine.transitionTo('ABORTABLE_ERROR', abortable);
    expect(machine.lastError).toBe(abortable);
    machine.transitionTo('ABORTING_TRANSACTION');
    expect(machine.lastError).toBeNull();
    const fenced = new ProducerFencedError(90, 'fenced');
    machine.transitionTo('FATAL_ERROR', fenced);
    machine.transitionTo('FATAL_ERROR');
    expect(fatal).toBe(2);
    expect(machine.lastError).toBe(fenced);
  });

  it('maybeFailWithError throws the fatal error itself, and TransactionAbortableError with the cause when abortable', () => {
    const fenced = new ProducerFencedError(90, 'fenced');
    const fatal = machineIn('READY');
    fatal.transitionTo('FATAL_ERROR', fenced);
    expect(() => fatal.maybeFailWithError('send()')).toThrow(fenced);

    const abortable = machineIn('IN_TRANSACTION');
    const cause = new Error('offsets commit failed');
    abortable.transitionTo('ABORTABLE_ERROR', cause);
    const error = (() => {
      try {
        abortable.maybeFailWithError('commitTransaction()');
      } catch (e) {
        return e as TransactionAbortableError;
      }
    })();
    expect(error).toBeInstanceOf(TransactionAbortableError);
    expect(error!.message).toMatch(/cannot call commitTransaction\(\).*call abortTransaction\(\)\. Cause: offsets commit failed/);
    expect(error!.cause).toBe(cause);

    expect(() => machineIn('IN_TRANSACTION').maybeFailWithError('send()')).not.toThrow();
  });
});
