/**
 * One cluster CA for every replica, checked through the store; no private key in it.
 *
 * Every replica holds the cluster's shared PKI in its own <data-dir>/pki (copied there out of
 * band: src/certificates/store-pki.ts says why and how). What the store holds is only the
 * cluster CA's certificate, at /carina/pki/ca.crt: the first replica to start puts its own
 * there, and every replica compares its local ca.crt with it, refusing to start on a mismatch,
 * so a replica given another cluster's PKI fails at once and says so instead of issuing admin
 * certificates that the other replicas reject.
 *
 * Earlier versions kept the CA's certificate and key at /carina/pki/ca. A replica that finds
 * that key deletes it (the store's history keeps the old value until it is compacted away).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KvClient } from '../../raft';
import { PKI_FILES, pkiDirectory } from '../certificates';

export const SHARED_CA_CERT_KEY = '/carina/pki/ca.crt';
/** Where earlier versions kept the CA with its private key. */
export const LEGACY_SHARED_CA_KEY = '/carina/pki/ca';

export class SharedCaMismatchError extends Error {
  readonly code = 'SHARED_CA_MISMATCH';

  constructor(message: string) {
    super(message);
    this.name = 'SharedCaMismatchError';
  }
}

const certKey = Buffer.from(SHARED_CA_CERT_KEY);
const legacyKey = Buffer.from(LEGACY_SHARED_CA_KEY);

/**
 * Publishes this replica's cluster CA certificate if none is, else checks that it is the
 * published one; removes a CA key left in the store by an earlier version. Store errors are
 * retried until `timeoutMs` (the store may still be electing a leader); a mismatch is not.
 */
export async function checkSharedClusterCa(kv: KvClient, dataDir: string, log: (line: string) => void, timeoutMs = 60_000): Promise<void> {
  const local = await readFile(join(pkiDirectory(dataDir), PKI_FILES.caCert), 'utf8');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const legacy = await kv.deleteRange({ key: legacyKey });
      if (legacy.deleted > 0) log(`removed the cluster CA key that an earlier version kept in the store at ${LEGACY_SHARED_CA_KEY}`);
      const response = await kv.txn({
        compare: [{ key: certKey, target: 'CREATE', createRevision: 0, result: 'EQUAL' }],
        success: [{ requestPut: { key: certKey, value: Buffer.from(local) } }],
        failure: [{ requestRange: { key: certKey } }],
      });
      if (response.succeeded) {
        log('cluster CA certificate published to the store');
        return;
      }
      const range = response.responses[0];
      const shared = range !== undefined && 'responseRange' in range ? range.responseRange.kvs[0] : undefined;
      if (shared === undefined) throw new Error('the published CA certificate vanished');
      if (Buffer.from(shared.value).toString('utf8') !== local) {
        throw new SharedCaMismatchError(
          `this replica's cluster CA (${join(pkiDirectory(dataDir), PKI_FILES.caCert)}) is not the one the cluster uses: ` +
            'copy the cluster\'s shared PKI from another member (carina pki copy) into an empty pki directory',
        );
      }
      return;
    } catch (err) {
      if (err instanceof SharedCaMismatchError || Date.now() > deadline) throw err;
      log(`checking the cluster CA against the store: ${(err as Error).message}; retrying`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
