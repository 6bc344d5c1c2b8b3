/**
 * Moved to share/transactional-deliveries.ts. This path stays for
 * transaction-manager.ts, which is being split on its own branch; drop it
 * once it imports from share/.
 */
export * from './share/transactional-deliveries.js';
