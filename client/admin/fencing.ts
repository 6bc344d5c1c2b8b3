/**
 * Admin's producer fencing: fenceProducers and forceTerminateTransaction.
 * Fencing a transactional id is an InitProducerId for it with no producer id
 * or epoch, sent to its transaction coordinator: the coordinator bumps the
 * id's epoch (aborting a transaction left open), so the producer that held
 * the old epoch is fenced on its next request.
 *
 * Kafka: KafkaAdminClient.fenceProducers and forceTerminateTransaction,
 * FenceProducersHandler.
 * - The transaction timeout sent is the client's request.timeout.ms, as Kafka's
 *   handler sends it: the coordinator only needs it to write the bumped epoch.
 * - CONCURRENT_TRANSACTIONS and COORDINATOR_LOAD_IN_PROGRESS are retried, NOT_COORDINATOR
 *   and COORDINATOR_NOT_AVAILABLE look the coordinator up again (client/cluster/coordinators.ts);
 *   CLUSTER_AUTHORIZATION_FAILED, TRANSACTIONAL_ID_AUTHORIZATION_FAILED and anything else
 *   are the id's entry error.
 * - forceTerminateTransaction (KIP-939's way to end a prepared two-phase transaction
 *   whose owner is gone) is, in Kafka 4.x, exactly fenceProducers of one id: keepPreparedTxn
 *   stays false, so the coordinator aborts what is prepared.
 */
import { InitProducerIdRequest, InitProducerIdResponse } from '../../generated/index.js';
import type { Admin } from '../admin.js';
import { CoordinatorType } from '../cluster.js';
import { deadlineOf, type AdminCallOptions } from './call.js';
import { perEntry, toCoordinator } from './per-entry.js';
import { AdminResult } from './result.js';

/** Kafka's ProducerIdAndEpoch, as FenceProducersResult.producerId / epochId give them. */
export interface FencedProducer {
  producerId: bigint;
  /** The new epoch: every request with an older one is fenced. */
  producerEpoch: number;
}

/** Fences the producers of these transactional ids; one outcome per id. */
export async function fenceProducers(
  admin: Admin,
  transactionalIds: readonly string[],
  options: AdminCallOptions = {},
): Promise<AdminResult<string, FencedProducer>> {
  const deadline = deadlineOf(admin, options);
  return new AdminResult(
    await perEntry(transactionalIds, async (transactionalId): Promise<FencedProducer> => {
      const { response } = await toCoordinator(
        admin,
        `InitProducerId (fencing ${transactionalId})`,
        CoordinatorType.TRANSACTION,
        transactionalId,
        { request: InitProducerIdRequest, response: InitProducerIdResponse },
        () =>
          InitProducerIdRequest.create({
            transactionalId,
            transactionTimeoutMs: admin.cluster.requestTimeoutMs,
            producerId: -1n,
            producerEpoch: -1,
            enable2Pc: false,
            keepPreparedTxn: false,
          }),
        (r) => ({ code: r.errorCode }),
        { deadline },
      );
      return { producerId: response.producerId, producerEpoch: response.producerEpoch };
    }),
  );
}

/** Aborts the transaction (prepared or not) of a transactional id by fencing its producer (Kafka's forceTerminateTransaction). */
export async function forceTerminateTransaction(admin: Admin, transactionalId: string, options: AdminCallOptions = {}): Promise<void> {
  (await fenceProducers(admin, [transactionalId], options)).get(transactionalId);
}
