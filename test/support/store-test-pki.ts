/**
 * The PKI of a Carina cluster under test, made as an operator makes it: the cluster's shared
 * PKI once in `<dir>/pki`, copied into each member's data directory before it starts (and into
 * a member added later with copyTo), plus a client certificate of the test's own from the store
 * CA, since the store's etcd API refuses any client without one. Flags for the carina client
 * commands and for etcdctl carry the same files.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EtcdClientTls } from '../../raft/etcd/etcd-client';
import { STORE_PKI_FILES, copySharedPki, issueStoreClientCertificate, pkiDirectory } from '../../src/certificates';
import { distributeSharedPki } from '../../src/cluster';

export interface StoreTestPki {
  /** The shared PKI directory (`<dir>/pki`). */
  sharedPki: string;
  caFile: string;
  clientCertFile: string;
  clientKeyFile: string;
  /** PEM, for EtcdClient. */
  clientTls: EtcdClientTls;
  /** --cacert, --cert, --key for `carina members` and `carina snapshot save`. */
  carinaFlags: string[];
  /** The same for etcdctl. */
  etcdctlFlags: string[];
  /** Copies the shared PKI into a new member's data directory (what `carina members add` asks). */
  copyTo(dataDir: string): Promise<void>;
}

export async function makeStoreTestPki(dir: string, dataDirs: string[]): Promise<StoreTestPki> {
  const sharedPki = await distributeSharedPki(dir, dataDirs);
  const ca = { certPem: readFileSync(join(sharedPki, STORE_PKI_FILES.storeCaCert), 'utf8'), keyPem: readFileSync(join(sharedPki, STORE_PKI_FILES.storeCaKey), 'utf8') };
  const client = await issueStoreClientCertificate(ca, 'carina-test-client');
  const clientDir = join(dir, 'client');
  mkdirSync(clientDir, { recursive: true, mode: 0o700 });
  const caFile = join(clientDir, 'ca.crt');
  const clientCertFile = join(clientDir, 'client.crt');
  const clientKeyFile = join(clientDir, 'client.key');
  writeFileSync(caFile, ca.certPem);
  writeFileSync(clientCertFile, client.certPem);
  writeFileSync(clientKeyFile, client.keyPem, { mode: 0o600 });
  return {
    sharedPki,
    caFile,
    clientCertFile,
    clientKeyFile,
    clientTls: { ca: ca.certPem, cert: client.certPem, key: client.keyPem },
    carinaFlags: ['--cacert', caFile, '--cert', clientCertFile, '--key', clientKeyFile],
    etcdctlFlags: [`--cacert=${caFile}`, `--cert=${clientCertFile}`, `--key=${clientKeyFile}`],
    copyTo: async (dataDir) => {
      await copySharedPki(sharedPki, pkiDirectory(dataDir));
    },
  };
}
