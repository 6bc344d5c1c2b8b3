/**
 * The transaction coordinator of a transactional id, and which protocol it
 * speaks: Transactions V2 (KIP-890 part 2) when it finalizes the
 * `transaction.version` feature at 2 or more and serves EndTxn v5 (Kafka's
 * TransactionManager.maybeUpdateTransactionV2Enabled reads the same feature
 * from ApiVersions); plus the APIs two-phase commit
 * (KIP-939) and transactional share acks (KIP-1289) need.
 */
import { AddShareAcksToTxnRequest, EndTxnRequest, InitProducerIdRequest, TxnShareAcknowledgeRequest } from '../../generated/index.js';
import { type ClusterClient, CoordinatorType } from '../cluster.js';
import { UnsupportedVersionError } from '../errors.js';
import { INIT_PRODUCER_ID_2PC_VERSION, TV2_MIN_VERSIONS } from '../transaction-protocol.js';

/**
 * Whether the coordinator of `transactionalId` runs Transactions V2. With
 * `enable2Pc`, throws UnsupportedVersionError unless it has InitProducerId v6
 * and Transactions V2.
 */
export async function coordinatorRunsTransactionsV2(cluster: ClusterClient, transactionalId: string, enable2Pc: boolean, deadline: number): Promise<boolean> {
  const coordinator = await cluster.findCoordinator(CoordinatorType.TRANSACTION, transactionalId, deadline);
  const transactionV2 =
    (await cluster.finalizedFeature(coordinator, 'transaction.version', deadline)) >= 2 &&
    (await cluster.supports(coordinator, EndTxnRequest.apiKey, TV2_MIN_VERSIONS.endTxn, deadline));
  if (enable2Pc) {
    if (!(await cluster.supports(coordinator, InitProducerIdRequest.apiKey, INIT_PRODUCER_ID_2PC_VERSION, deadline))) {
      throw new UnsupportedVersionError(
        `the transaction coordinator ${cluster.describeNode(coordinator)} does not support InitProducerId v6 (two-phase commit, KIP-939); unset transactionTwoPhaseCommitEnable or use a newer broker`,
      );
    }
    if (!transactionV2) {
      // Under TV1 a producer keeps its epoch across transactions, so a PreparedTxnState could not tell one from the next.
      throw new UnsupportedVersionError(
        `the transaction coordinator ${cluster.describeNode(coordinator)} does not finalize transaction.version 2; two-phase commit needs Transactions V2`,
      );
    }
  }
  return transactionV2;
}

/**
 * Fails with UnsupportedVersionError unless the transaction coordinator has
 * AddShareAcksToTxn and TxnShareAcknowledge (KIP-1289): for callers whose only
 * use of the transaction is share acknowledgements, before InitProducerId
 * fences anything.
 */
export async function checkShareAckSupport(cluster: ClusterClient, transactionalId: string, deadline: number): Promise<void> {
  const tc = await cluster.findCoordinator(CoordinatorType.TRANSACTION, transactionalId, deadline);
  for (const codec of [AddShareAcksToTxnRequest, TxnShareAcknowledgeRequest]) {
    if (!(await cluster.supports(tc, codec.apiKey, 0, deadline))) {
      throw new UnsupportedVersionError(
        `the transaction coordinator ${cluster.describeMissingApi(tc, codec, 'KIP-1289')}. ` +
          'Transactional share acknowledgements need a broker with KIP-1289.',
      );
    }
  }
}
