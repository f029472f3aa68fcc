/**
 * One cluster CA for every replica. The first replica to start puts its CA in the store (key
 * /carina/pki/ca, outside /registry/); every replica then writes that CA into its own
 * <data-dir>/pki before loading its certificates, so leaves issued by an older local CA are
 * issued again from the shared one. An admin kubeconfig written by any replica is then
 * accepted by all of them, which is what clients behind a load balancer need.
 * The CA key lives in the store like the Secrets do: whoever can read the store owns the cluster.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KvClient } from '../../raft';
import { PKI_FILES, loadOrCreateClusterCertificates, pkiDirectory, writeFileAtomically } from '../certificates';

export const SHARED_CA_KEY = '/carina/pki/ca';

interface StoredCa {
  certPem: string;
  keyPem: string;
}

const key = Buffer.from(SHARED_CA_KEY);

async function readShared(kv: KvClient): Promise<StoredCa | undefined> {
  const response = await kv.range({ key });
  const kv0 = response.kvs[0];
  return kv0 === undefined ? undefined : (JSON.parse(Buffer.from(kv0.value).toString('utf8')) as StoredCa);
}

async function writeLocal(dataDir: string, ca: StoredCa): Promise<void> {
  const dir = pkiDirectory(dataDir);
  const current = await readFile(join(dir, PKI_FILES.caCert), 'utf8').catch(() => '');
  if (current === ca.certPem) return;
  // A member that joins a running cluster finds the CA shared before it made any of its own.
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFileAtomically(join(dir, PKI_FILES.caKey), ca.keyPem, 0o600);
  await writeFileAtomically(join(dir, PKI_FILES.caCert), ca.certPem, 0o644);
}

/** Makes <data-dir>/pki hold the cluster's shared CA, publishing the local one if none is shared yet. */
export async function adoptSharedClusterCa(kv: KvClient, dataDir: string, log: (line: string) => void, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      let shared = await readShared(kv);
      if (shared === undefined) {
        const local = await loadOrCreateClusterCertificates(dataDir);
        const candidate: StoredCa = { certPem: local.ca.certPem, keyPem: local.ca.keyPem };
        const response = await kv.txn({
          compare: [{ key, target: 'CREATE', createRevision: 0, result: 'EQUAL' }],
          success: [{ requestPut: { key, value: Buffer.from(JSON.stringify(candidate)) } }],
          failure: [],
        });
        shared = response.succeeded ? candidate : await readShared(kv);
        if (response.succeeded) log('cluster CA published to the store');
      }
      if (shared === undefined) throw new Error('the shared CA vanished');
      await writeLocal(dataDir, shared);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      log(`sharing the cluster CA: ${(err as Error).message}; retrying`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
