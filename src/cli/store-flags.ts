/**
 * The flags of `carina server` and of the store's client commands that concern the store's TLS
 * and the shared PKI, in the names etcd, kube-apiserver and etcdctl give them:
 *
 *   carina server (embedded store)   --cert-file --key-file --trusted-ca-file
 *                                    --peer-cert-file --peer-key-file --peer-trusted-ca-file
 *   carina server --etcd-servers     --etcd-cafile --etcd-certfile --etcd-keyfile
 *   carina members, carina snapshot  --cacert --cert --key
 *
 * Left empty, the server's flags mean the files in <data-dir>/pki that the replica issues for
 * itself from the shared store CA (src/certificates/store-pki.ts); given, they are used as they
 * are, and nothing is issued in their place. The store never runs without TLS.
 *
 * Also kube-apiserver's --encryption-provider-config (src/storage/encryption).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EtcdClientTls, MutualTls } from '../../raft';
import {
  CertificateError,
  STORE_PEER_COMMON_NAME,
  STORE_PKI_FILES,
  createSharedPki,
  loadOrCreateStoreCertificates,
  missingSharedPkiFiles,
  pkiDirectory,
  requireSharedPki,
  storeNamesForAddresses,
} from '../certificates';
import type { StoreTls } from '../server/store-server';
import { isEncryptionError, loadEncryptionConfiguration, type ValueTransformer } from '../storage';
import { FlagError, type FlagSpec, type FlagValues } from './flags';

export const STORE_TLS_FLAGS: FlagSpec[] = [
  { name: 'cert-file', kind: 'string', default: '', help: 'Certificate of the store\'s etcd v3 API (TLS only) (default <data-dir>/pki/etcd/server.crt, issued from the store CA).' },
  { name: 'key-file', kind: 'string', default: '', help: 'Key of --cert-file (default <data-dir>/pki/etcd/server.key).' },
  { name: 'trusted-ca-file', kind: 'string', default: '', help: 'CA whose certificates the etcd v3 API requires of every client, as etcd\'s --client-cert-auth (default <data-dir>/pki/etcd/ca.crt).' },
  { name: 'peer-cert-file', kind: 'string', default: '', help: 'Certificate the Raft transport presents to peers, as server and as client (default <data-dir>/pki/etcd/peer.crt).' },
  { name: 'peer-key-file', kind: 'string', default: '', help: 'Key of --peer-cert-file (default <data-dir>/pki/etcd/peer.key).' },
  { name: 'peer-trusted-ca-file', kind: 'string', default: '', help: 'CA whose certificates the Raft transport requires of every peer, as etcd\'s --peer-client-cert-auth (default <data-dir>/pki/etcd/ca.crt).' },
  { name: 'peer-cert-allowed-cn', kind: 'string', default: '', help: 'The only subject CN a peer\'s certificate may have, so that a client certificate from the same CA cannot act as a peer (default carina-store-peer, the CN of the peer certificates Carina issues, unless --peer-cert-file is given).' },
  { name: 'etcd-cafile', kind: 'string', default: '', help: 'With --etcd-servers: CA that the etcd servers\' certificates must come from (kube-apiserver\'s flag).' },
  { name: 'etcd-certfile', kind: 'string', default: '', help: 'With --etcd-servers: client certificate presented to etcd.' },
  { name: 'etcd-keyfile', kind: 'string', default: '', help: 'With --etcd-servers: key of --etcd-certfile.' },
];

/** etcdctl's names, for the commands that talk to a running store. */
export const STORE_CLIENT_FLAGS: FlagSpec[] = [
  { name: 'cacert', kind: 'string', default: '', help: 'CA of the store\'s certificates (a member\'s <data-dir>/pki/etcd/ca.crt).' },
  { name: 'cert', kind: 'string', default: '', help: 'Client certificate from the store CA (e.g. a member\'s <data-dir>/pki/apiserver-etcd-client.crt).' },
  { name: 'key', kind: 'string', default: '', help: 'Key of --cert (e.g. <data-dir>/pki/apiserver-etcd-client.key).' },
  { name: 'data-dir', kind: 'string', default: '', help: 'Shorthand: a member\'s data directory, for --cacert, --cert and --key from its pki.' },
];

function readPem(file: string, flag: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new FlagError(`--${flag} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/**
 * Makes <data-dir>/pki hold the cluster's shared PKI: created here when this replica founds the
 * cluster (`mayCreate`), else required (copied by the operator, `carina pki copy`, the local
 * cluster or the tests). Returns the files it created.
 */
export async function prepareSharedPki(dataDir: string, mayCreate: boolean, log: (line: string) => void): Promise<string[]> {
  const pkiDir = pkiDirectory(dataDir);
  const missing = await missingSharedPkiFiles(pkiDir);
  if (missing.length === 0) return [];
  if (!mayCreate) {
    try {
      await requireSharedPki(pkiDir);
    } catch (err) {
      if (err instanceof CertificateError) throw new FlagError(`${err.message}. Only the first member of a new cluster (the lowest --member-id of --initial-cluster) creates it.`);
      throw err;
    }
  }
  const created = await createSharedPki(pkiDir);
  if (created.length > 0) log(`created the cluster's shared PKI in ${pkiDir}: ${created.join(', ')}; copy these to every other member's <data-dir>/pki before starting it`);
  return created;
}

/** Whether a replica founds its cluster's PKI: a new cluster's member with the lowest id. */
export function foundsSharedPki(memberId: number, memberIds: readonly number[], initialClusterState: 'new' | 'existing'): boolean {
  return initialClusterState === 'new' && memberId === Math.min(...memberIds);
}

/**
 * The store's TLS material from the flags, issuing this replica's own certificates from the
 * store CA for those flags left empty. `addresses` are the replica's (Raft and etcd API,
 * listening and advertised), for the certificates' names.
 */
export async function resolveStoreTls(flags: FlagValues, dataDir: string, addresses: readonly string[], log: (line: string) => void): Promise<StoreTls> {
  const given = (name: string): string => flags[name] as string;
  const names = ['cert-file', 'key-file', 'trusted-ca-file', 'peer-cert-file', 'peer-key-file', 'peer-trusted-ca-file'];
  const pkiDir = pkiDirectory(dataDir);
  const needIssued = names.some((n) => given(n) === '');
  let issued: Awaited<ReturnType<typeof loadOrCreateStoreCertificates>> | undefined;
  if (needIssued) {
    issued = await loadOrCreateStoreCertificates(pkiDir, storeNamesForAddresses(addresses));
    const changed = Object.entries(issued.outcome).filter(([, outcome]) => outcome !== 'reused').map(([which, outcome]) => `${which} ${outcome}`);
    if (changed.length > 0) log(`store certificates in ${pkiDir}: ${changed.join(', ')}`);
  }
  const pick = (flag: string, fallback: string | undefined): string => (given(flag) !== '' ? readPem(given(flag), flag) : (fallback as string));
  const server: MutualTls = {
    cert: pick('cert-file', issued?.server.certPem),
    key: pick('key-file', issued?.server.keyPem),
    ca: pick('trusted-ca-file', issued?.caCertPem),
  };
  const peer: MutualTls = {
    cert: pick('peer-cert-file', issued?.peer.certPem),
    key: pick('peer-key-file', issued?.peer.keyPem),
    ca: pick('peer-trusted-ca-file', issued?.caCertPem),
  };
  // With the peer certificates Carina issues, only their CN is a peer's: a client certificate of the same CA is not.
  const allowedCn = given('peer-cert-allowed-cn') !== '' ? given('peer-cert-allowed-cn') : given('peer-cert-file') === '' ? STORE_PEER_COMMON_NAME : undefined;
  // Calls to other members present the peer certificate (it has clientAuth, as etcd's peer certificates do).
  return { server, peer, client: { cert: peer.cert, key: peer.key, ca: server.ca }, allowedPeerCommonName: allowedCn };
}

/** --etcd-cafile, --etcd-certfile, --etcd-keyfile, for --etcd-servers; undefined when none is given. */
export function externalEtcdTls(flags: FlagValues): EtcdClientTls | undefined {
  const ca = flags['etcd-cafile'] as string;
  const cert = flags['etcd-certfile'] as string;
  const key = flags['etcd-keyfile'] as string;
  if (ca === '' && cert === '' && key === '') return undefined;
  if ((cert === '') !== (key === '')) throw new FlagError('--etcd-certfile and --etcd-keyfile go together');
  return {
    ca: ca === '' ? undefined : readPem(ca, 'etcd-cafile'),
    cert: cert === '' ? undefined : readPem(cert, 'etcd-certfile'),
    key: key === '' ? undefined : readPem(key, 'etcd-keyfile'),
  };
}

/**
 * --cacert, --cert, --key (or --data-dir for all three) for a command that talks to the store.
 * The store requires a client certificate, so a command without one is refused before it tries.
 */
export function storeClientTls(flags: FlagValues): EtcdClientTls {
  const dataDir = flags['data-dir'] as string;
  const pki = dataDir === '' ? '' : pkiDirectory(dataDir);
  const file = (flag: string, fallback: string): string => ((flags[flag] as string) !== '' ? (flags[flag] as string) : pki === '' ? '' : join(pki, fallback));
  const ca = file('cacert', STORE_PKI_FILES.storeCaCert);
  const cert = file('cert', STORE_PKI_FILES.clientCert);
  const key = file('key', STORE_PKI_FILES.clientKey);
  if (ca === '' || cert === '' || key === '') {
    throw new FlagError('the store requires a client certificate: give --cacert, --cert and --key (as etcdctl), or --data-dir of a member whose pki holds them');
  }
  return { ca: readPem(ca, 'cacert'), cert: readPem(cert, 'cert'), key: readPem(key, 'key') };
}

export const ENCRYPTION_PROVIDER_CONFIG_FLAG: FlagSpec = {
  name: 'encryption-provider-config',
  kind: 'string',
  default: '',
  help: 'File with an EncryptionConfiguration (apiserver.config.k8s.io/v1): how resources (Secrets, usually) are encrypted in the store: identity, aescbc, aesgcm, secretbox; the first provider and key write.',
};

/** The transformers of --encryption-provider-config, or undefined without the flag; a bad file is a FlagError with kube's message. */
export async function encryptionProviders(flags: FlagValues): Promise<Map<string, ValueTransformer> | undefined> {
  const file = flags['encryption-provider-config'] as string;
  if (file === '') return undefined;
  try {
    return await loadEncryptionConfiguration(file);
  } catch (err) {
    if (isEncryptionError(err)) throw new FlagError(`--encryption-provider-config: ${err.message}`);
    throw err;
  }
}
