/**
 * Moved to share/acknowledgements.ts. This path stays for producer.ts and
 * transaction-manager.ts, which are being split on their own branches; drop it
 * once they import from share/.
 */
export * from './share/acknowledgements.js';
