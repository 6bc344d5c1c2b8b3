/**
 * KIP-1289 §2.1 — consume-transform-produce, exactly once.
 *
 * A share group of order pricers reads `orders`, prices each order and writes
 * it to `orders-priced`. Each poll is one transaction, as in the KIP's §2.1:
 *
 *   beginTransaction → poll → transform → send → sendShareAcksToTransaction → commitTransaction
 *
 * so the priced orders and the acknowledgements of the orders they came from
 * commit together, or not at all. Once, the pricer fails after binding the
 * acks and before committing (simulated: the first transaction holding
 * order-7), and aborts: its priced orders, already in the log, never become
 * visible to a read_committed reader, and its orders go back to the share
 * group at once (not after the 30 s record lock) to be priced again.
 *
 * A failure *before* sendShareAcksToTransaction() leaves the polled records
 * out of the transaction: an abort then does not touch them, and they come
 * back only when their lock expires (KIP-1289 §6, case 6).
 *
 *   npx kipgen example consume-transform-produce [--bootstrap host:port]
 */
import { Registry } from 'prom-client';
import {
  KafkaProducer,
  KafkaShareConsumer,
  ShareAcknowledgements,
  type RecordMetadata,
  type ShareConsumerRecord,
  type ShareTransactionMetricsSnapshot,
} from '../client/index.js';
import {
  describeEnvironment,
  exactlyOnce,
  finish,
  formatMetrics,
  isThisRun,
  position,
  produceInput,
  prometheusText,
  readTopic,
  runExample,
  text,
  type ExampleEnvironment,
  type ExampleOptions,
  type ExampleSummary,
} from './support.js';

export const NAME = 'consume-transform-produce';
const ORDERS = 'orders';
const PRICED = 'orders-priced';
const ORDER_COUNT = 12;
/** The first transaction holding this order fails before its commit. */
const FAILING_ORDER = 7;
/** Price list, in cents. */
const MENU: Record<string, number> = { espresso: 250, latte: 380, cappuccino: 350, tea: 200 };

interface Order {
  order: number;
  item: string;
  qty: number;
}

interface PricedOrder extends Order {
  totalCents: number;
}

/** The transform. */
function price(order: Order): PricedOrder {
  return { ...order, totalCents: MENU[order.item]! * order.qty };
}

/** How a poll is printed: `order-2, order-7 (delivery 2), …`. */
function label(records: ShareConsumerRecord[], orders: ShareConsumerRecord[]): string {
  const others = records.length - orders.length;
  return [
    ...orders.map((r) => `${text(r.key)}${r.deliveryCount > 1 ? ` (delivery ${r.deliveryCount})` : ''}`),
    ...(others > 0 ? [`${others} of earlier runs (acknowledged only)`] : []),
  ].join(', ');
}

/** Stands in for any failure between sendShareAcksToTransaction() and commitTransaction(): a crash, a failed send, a shutdown. */
function simulateFailureBeforeCommit(orders: ShareConsumerRecord[]): void {
  const failing = orders.find((r) => text(r.key) === `order-${FAILING_ORDER}` && r.deliveryCount === 1);
  if (failing) throw new Error(`simulated failure before commitTransaction() (${text(failing.key)} is in this transaction)`);
}

export interface ConsumeTransformProduceSummary extends ExampleSummary {
  /** Orders produced to `orders`. */
  inputs: number;
  /** Priced orders a read_committed reader sees in `orders-priced` at the end. */
  outputsCommitted: number;
  transactionsCommitted: number;
  transactionsAborted: number;
  /** Priced orders the aborted transaction wrote to the log (a read_committed reader skips them). */
  abortedOutputsInLog: number;
  /** Of those, how many a read_committed reader saw right after the abort (must be 0). */
  abortedOutputsVisible: number;
  /** Orders of the aborted transaction that were delivered again. */
  redelivered: number;
  /** From abortTransaction() to the poll that got them back. */
  redeliveredAfterMs: number | null;
  /** Orders without a committed priced order. */
  lost: number;
  /** Priced orders committed more than once. */
  duplicated: number;
  /** Priced orders with a wrong total. */
  wrong: number;
  metrics: ShareTransactionMetricsSnapshot;
  prometheus: string[];
}

export async function runConsumeTransformProduce(options: ExampleOptions = {}): Promise<ConsumeTransformProduceSummary> {
  return runExample(
    [
      { name: ORDERS, partitions: 3 },
      { name: PRICED, partitions: 3 },
    ],
    options,
    consumeTransformProduce,
  );
}

async function consumeTransformProduce(env: ExampleEnvironment): Promise<ConsumeTransformProduceSummary> {
  const { print, bootstrap, runId, logger } = env;
  const groupId = await env.shareGroup('order-pricers');
  print(`consume-transform-produce (KIP-1289 §2.1): ${ORDERS} → price → ${PRICED}, output and acknowledgements in one transaction`);
  print(`  ${describeEnvironment(env)}`);

  // 1. Input: a dozen orders.
  const items = Object.keys(MENU);
  await produceInput(env, ORDERS, ORDER_COUNT, (i) => {
    const order: Order = { order: i, item: items[i % items.length]!, qty: 1 + (i % 3) };
    return { key: `order-${i}`, value: order };
  });
  print(`1. produced ${ORDER_COUNT} orders (order-0 … order-${ORDER_COUNT - 1}) to ${ORDERS} (3 partitions)`);

  // 2. The pricer: a share consumer in transactional mode and a transactional producer.
  const registry = new Registry(); // the producer's KIP-1289 metrics, as a Prometheus scrape would see them
  const consumer = new KafkaShareConsumer({
    bootstrapServers: bootstrap,
    groupId,
    acknowledgementMode: 'transactional', // acks go only through the producer's transaction
    maxPollRecords: 4,
    logger,
  });
  const producer = new KafkaProducer({
    bootstrapServers: bootstrap,
    transactionalId: env.unique('order-pricer-1'),
    lingerMs: 0,
    metricsRegistry: registry,
    logger,
  });
  consumer.subscribe([ORDERS]);
  await producer.initTransactions();
  print(
    `2. share consumer joined group ${groupId} (acknowledgementMode 'transactional'); producer ${producer.transactionSnapshot().transactionalId} initialised`,
  );

  // 3. The loop, one transaction per poll.
  print('3. beginTransaction → poll → price → send → sendShareAcksToTransaction → commitTransaction, per poll:');
  const priced = new Set<number>();
  let committed = 0;
  let aborted = 0;
  let abortedAt = 0;
  let abortedOrders: ShareConsumerRecord[] = [];
  let abortedOutputsInLog = 0;
  let abortedOutputsVisible = 0;
  let redeliveredAfterMs: number | null = null;
  const redelivered = new Set<string>();
  const deadline = Date.now() + 30_000;
  while (priced.size < ORDER_COUNT) {
    if (Date.now() > deadline) throw new Error(`only ${priced.size} of ${ORDER_COUNT} orders priced after 30 s`);
    producer.beginTransaction();
    const records = await consumer.poll(500);
    const orders = records.filter((r) => isThisRun(env, r)); // on a shared broker: older runs' orders are acknowledged, not priced
    for (const r of orders) {
      if (abortedOrders.some((a) => position(a) === position(r))) {
        redelivered.add(position(r));
        redeliveredAfterMs ??= Date.now() - abortedAt;
      }
    }
    let sends: Array<Promise<RecordMetadata>> = [];
    try {
      sends = orders.map((record) =>
        producer.send({
          topic: PRICED,
          key: record.key,
          value: JSON.stringify(price(JSON.parse(text(record.value)) as Order)),
          headers: { run: runId },
        }),
      );
      await Promise.all(sends); // the priced orders are in the log now, not yet visible
      // Bind the share acks to this transaction (KIP-1289).
      await producer.sendShareAcksToTransaction(ShareAcknowledgements.fromRecords(records, 'accept'), consumer.groupMetadata());
      simulateFailureBeforeCommit(orders);
      await producer.commitTransaction(); // the priced orders and the acks, atomically
      if (records.length === 0) continue; // an empty transaction: nothing was sent to the broker
      committed++;
      for (const r of orders) priced.add((JSON.parse(text(r.value)) as Order).order);
      print(`   txn ${committed + aborted}: ${label(records, orders)} → ${sends.length} priced → committed`);
    } catch (error) {
      // Anything failed: abort. The priced orders sent are discarded, and the
      // acks in the transaction too: the polled orders are available again at once.
      // (After a fatal error such as ProducerFencedError, close() the producer instead.)
      await producer.abortTransaction();
      abortedAt = Date.now();
      aborted++;
      abortedOrders = orders;
      const results = await Promise.allSettled(sends);
      abortedOutputsInLog = results.filter((r) => r.status === 'fulfilled').length;
      print(`   txn ${committed + aborted}: ${label(records, orders)} → ${(error as Error).message} → abortTransaction()`);

      // What does a read_committed reader of orders-priced see now?
      const visible = (await readTopic(bootstrap, PRICED, 'read_committed')).filter((r) => isThisRun(env, r));
      const inLog = (await readTopic(bootstrap, PRICED, 'read_uncommitted')).filter((r) => isThisRun(env, r));
      const abortedKeys = new Set(orders.map((r) => text(r.key)));
      abortedOutputsVisible = visible.filter((r) => abortedKeys.has(r.key)).length;
      print(`      its ${abortedOutputsInLog} priced orders were already in the log and its acks pending on the share coordinator;`);
      print(
        `      now a read_committed reader sees ${visible.length} priced orders, ${abortedOutputsVisible} of them from this transaction; a read_uncommitted one sees all ${inLog.length} records in the log`,
      );
    }
  }
  const leftOver = (await consumer.poll(300)).filter((r) => isThisRun(env, r)).length;
  print(
    `   ${ORDER_COUNT} orders priced in ${committed} committed transactions; ${redelivered.size} order(s) redelivered ${redeliveredAfterMs ?? '?'} ms after the abort (record lock: 30 s); ${leftOver} left to deliver`,
  );

  // 4. Verify with a read_committed reader: every order priced exactly once, correctly.
  const outputs = (await readTopic(bootstrap, PRICED, 'read_committed')).filter((r) => isThisRun(env, r));
  const pricedOrders = outputs.map((r) => JSON.parse(r.value) as PricedOrder);
  const { lost, duplicated } = exactlyOnce(
    pricedOrders.map((p) => p.order),
    Array.from({ length: ORDER_COUNT }, (_, i) => i),
  );
  const wrong = pricedOrders.filter((p) => p.totalCents !== MENU[p.item]! * p.qty).length;
  const totalCents = pricedOrders.reduce((sum, p) => sum + p.totalCents, 0);
  print(
    `4. read_committed reader of ${PRICED}: ${outputs.length} priced orders (total ${(totalCents / 100).toFixed(2)}), lost ${lost}, duplicated ${duplicated}, wrong ${wrong}`,
  );

  // 5. The KIP's metrics.
  const metrics = producer.metrics();
  const prometheus = await prometheusText(registry);
  print('5. producer.metrics() (KIP-1289 §3.5):');
  for (const line of formatMetrics(metrics)) print(`      ${line}`);
  print('   the same in Prometheus text (await registry.metrics()):');
  for (const line of prometheus) print(`      ${line}`);

  await consumer.close();
  await producer.close();

  const problems: string[] = [];
  if (lost > 0) problems.push(`${lost} order(s) lost`);
  if (duplicated > 0) problems.push(`${duplicated} priced order(s) duplicated`);
  if (wrong > 0) problems.push(`${wrong} priced order(s) wrong`);
  if (outputs.length !== ORDER_COUNT) problems.push(`${outputs.length} priced orders committed, expected ${ORDER_COUNT}`);
  if (aborted !== 1) problems.push(`${aborted} transactions aborted, expected 1`);
  if (abortedOutputsVisible > 0) problems.push(`${abortedOutputsVisible} aborted priced order(s) visible to read_committed`);
  if (redelivered.size !== abortedOrders.length) problems.push(`${redelivered.size} of ${abortedOrders.length} aborted orders redelivered`);
  if (redeliveredAfterMs === null || redeliveredAfterMs >= 30_000) problems.push('the aborted orders did not come back before their lock expired');
  if (leftOver > 0) problems.push(`${leftOver} order(s) delivered again after being committed`);
  if (metrics['share-transaction-abort-total'] !== 1) problems.push(`share-transaction-abort-total is ${metrics['share-transaction-abort-total']}, expected 1`);
  if (metrics['share-transaction-commit-time-ms'].count !== committed) problems.push('share-transaction-commit-time-ms count is not the number of commits');
  if (metrics['share-transaction-active'] !== 0) problems.push('share-transaction-active is not 0 at the end');

  return {
    ...finish(
      env,
      NAME,
      `${ORDER_COUNT} orders in, ${outputs.length} priced orders committed in ${committed} transactions; 1 transaction aborted, its ${redelivered.size} orders redelivered at once and its output never visible; lost ${lost}, duplicated ${duplicated}`,
      problems,
    ),
    inputs: ORDER_COUNT,
    outputsCommitted: outputs.length,
    transactionsCommitted: committed,
    transactionsAborted: aborted,
    abortedOutputsInLog,
    abortedOutputsVisible,
    redelivered: redelivered.size,
    redeliveredAfterMs,
    lost,
    duplicated,
    wrong,
    metrics,
    prometheus,
  };
}
