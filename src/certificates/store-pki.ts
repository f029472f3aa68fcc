/**
 * The PKI that every replica of one cluster shares, and the certificates of the store's two
 * ports (the etcd v3 API and the Raft peer transport). The layout of `<data-dir>/pki` follows
 * kubeadm's /etc/kubernetes/pki, with the store in the place of etcd:
 *
 *   shared by every replica: created once, then copied out of band to each new member
 *     ca.crt ca.key              the cluster CA (API serving and client certificates)
 *     sa.key sa.pub              the service-account token signing key pair (RSA 2048,
 *                                PKCS#8 private key, SPKI public key)
 *     etcd/ca.crt etcd/ca.key    the store CA: the one issuer the store's ports trust, kept apart
 *                                from the cluster CA as kubeadm keeps etcd/ca apart
 *     front-proxy-ca.crt/.key    the front-proxy CA: the issuer of the aggregator's client
 *                                certificate, which extension API servers trust for the
 *                                X-Remote-* headers (the request-header CA of
 *                                extension-apiserver-authentication), kept apart from the
 *                                cluster CA as kubeadm keeps it, so that the front proxy's
 *                                certificate is no client certificate of the API itself
 *   issued by each replica for itself, from those CAs, at every start when missing or stale
 *     apiserver.crt/.key admin.crt/.key        (cluster-ca.ts)
 *     front-proxy-client.crt/.key   the aggregator's client certificate (CN front-proxy-client,
 *                                clientAuth), from the front-proxy CA
 *     etcd/server.crt/.key       the etcd API's certificate (serverAuth and clientAuth)
 *     etcd/peer.crt/.key         the Raft transport's certificate, presented in both directions
 *                                (serverAuth and clientAuth)
 *     apiserver-etcd-client.crt/.key   a client of the store's etcd API (clientAuth): this
 *                                replica's calls to other members, and operators on this host
 *                                (etcdctl --cacert/--cert/--key, carina members, carina snapshot)
 *
 * Decision (ARCHITECTURE.md, "The store's ports and PKI"): no private key ever enters the store.
 * With client-certificate authentication on the store, a joining member needs certificates
 * before it can talk to anyone, so something must travel out of band anyway; copying the shared
 * files (`carina pki copy`, or scp) is that one step, as kubeadm's certificate copy is, and it
 * leaves nothing in the store for a holder of a store client certificate to read.
 *
 * Invariants: shared files are never created where `createSharedPki` was not asked to (a
 * second CA in one cluster would split it), with one exception: the front-proxy CA, which
 * builds before this one did not make, is made at start by a replica that lacks it
 * (`loadOrCreateFrontProxyCertificates`), so that their clusters keep working. Two replicas
 * that each made one are both trusted: extension-apiserver-authentication holds every
 * replica's request-header CA, as kube's ClusterAuthenticationTrust controller merges them. A
 * copy never replaces a shared file by a different one; leaves follow cluster-ca.ts's rules
 * (reissued when they no longer fit, never overwritten when unreadable, key written before
 * certificate, atomically, keys mode 0600).
 */
import { createPrivateKey, createPublicKey, generateKeyPair } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type forge from 'node-forge';
import {
  CertificateError,
  DNS_NAME,
  OID_CLIENT_AUTH,
  OID_SERVER_AUTH,
  PKI_FILES,
  buildAndSign,
  caTemplate,
  canonicalIp,
  certificateSans,
  generateRsaPrivateKeyPem,
  hasExtendedKeyUsage,
  leafValidity,
  loadCa,
  loadLeaf,
  parseForgeCertificate,
  readIfPresent,
  subjectValues,
  writeFileAtomically,
  writePair,
  type CertificateAndKey,
  type CertificateOutcome,
  type CertificateTemplate,
  type IssueOptions,
  type LoadedLeaf,
  type ParsedCertificate,
  type SubjectAltNames,
} from './cluster-ca';

export const STORE_CA_COMMON_NAME = 'carina-store-ca';
export const STORE_SERVER_COMMON_NAME = 'carina-store-server';
export const STORE_PEER_COMMON_NAME = 'carina-store-peer';
/** kubeadm's name for the API server's client certificate of etcd. */
export const STORE_CLIENT_COMMON_NAME = 'kube-apiserver-etcd-client';
/** kubeadm's names for the front-proxy CA and the aggregator's client certificate. */
export const FRONT_PROXY_CA_COMMON_NAME = 'front-proxy-ca';
export const FRONT_PROXY_CLIENT_COMMON_NAME = 'front-proxy-client';

export const STORE_PKI_FILES = {
  storeCaCert: path.join('etcd', 'ca.crt'),
  storeCaKey: path.join('etcd', 'ca.key'),
  serverCert: path.join('etcd', 'server.crt'),
  serverKey: path.join('etcd', 'server.key'),
  peerCert: path.join('etcd', 'peer.crt'),
  peerKey: path.join('etcd', 'peer.key'),
  clientCert: 'apiserver-etcd-client.crt',
  clientKey: 'apiserver-etcd-client.key',
  serviceAccountKey: 'sa.key',
  serviceAccountPublicKey: 'sa.pub',
  frontProxyCaCert: 'front-proxy-ca.crt',
  frontProxyCaKey: 'front-proxy-ca.key',
  frontProxyClientCert: 'front-proxy-client.crt',
  frontProxyClientKey: 'front-proxy-client.key',
} as const;

/** The shared files a replica cannot start without, relative to the pki directory. */
export const REQUIRED_SHARED_PKI_FILES: readonly string[] = [
  PKI_FILES.caCert,
  PKI_FILES.caKey,
  STORE_PKI_FILES.serviceAccountKey,
  STORE_PKI_FILES.serviceAccountPublicKey,
  STORE_PKI_FILES.storeCaCert,
  STORE_PKI_FILES.storeCaKey,
];

/**
 * The files every replica of a cluster holds alike, relative to the pki directory: the required
 * ones and the front-proxy CA (which a replica of a cluster made by an earlier build, without
 * one, makes at start).
 */
export const SHARED_PKI_FILES: readonly string[] = [...REQUIRED_SHARED_PKI_FILES, STORE_PKI_FILES.frontProxyCaCert, STORE_PKI_FILES.frontProxyCaKey];

/** Names always in the store's server and peer certificates (the replica's own host and loopback). */
export const DEFAULT_STORE_DNS_NAMES: readonly string[] = ['localhost'];
export const DEFAULT_STORE_IP_ADDRESSES: readonly string[] = ['127.0.0.1', '::1'];

const generateKeyPairAsync = promisify(generateKeyPair);

function isKeyFile(name: string): boolean {
  return name.endsWith('.key');
}

// ---------------------------------------------------------------------------------------------
// The shared part

/** The required shared files absent from `pkiDir`, in REQUIRED_SHARED_PKI_FILES order. */
export async function missingSharedPkiFiles(pkiDir: string): Promise<string[]> {
  const missing: string[] = [];
  for (const name of REQUIRED_SHARED_PKI_FILES) {
    if ((await readIfPresent(path.join(pkiDir, name))) === null) missing.push(name);
  }
  return missing;
}

/**
 * Throws SHARED_PKI_MISSING, naming the files and how to bring them, when `pkiDir` lacks any
 * shared file. For a replica that must not create them (it would start a second CA).
 */
export async function requireSharedPki(pkiDir: string): Promise<void> {
  const missing = await missingSharedPkiFiles(pkiDir);
  if (missing.length === 0) return;
  throw new CertificateError(
    'SHARED_PKI_MISSING',
    `${pkiDir} lacks ${missing.join(', ')} of the PKI that every replica of a cluster shares; copy them from a member's ` +
      `<data-dir>/pki (carina pki copy --from <that pki dir> --to ${pkiDir}, or scp), or create a new cluster's with carina pki init --dir ${pkiDir}`,
    { path: pkiDir },
  );
}

async function makePkiDirectories(pkiDir: string): Promise<void> {
  try {
    await fs.mkdir(path.join(pkiDir, 'etcd'), { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new CertificateError('IO_ERROR', `cannot create ${pkiDir}: ${(error as Error).message}`, { path: pkiDir, cause: error });
  }
}

/**
 * Creates what is missing of the shared PKI in `pkiDir` (the cluster CA, the store CA, the
 * service-account key pair, the front-proxy CA) and returns the files it wrote. What exists is
 * checked and kept. Only the one place that founds a cluster may call this: the first replica,
 * or `carina pki init`.
 */
export async function createSharedPki(pkiDir: string, options: IssueOptions = {}): Promise<string[]> {
  const now = options.now ?? new Date();
  await makePkiDirectories(pkiDir);
  const file = (name: string): string => path.join(pkiDir, name);
  const written: string[] = [];
  const clusterCa = await loadCa(file(PKI_FILES.caCert), file(PKI_FILES.caKey), now);
  const storeCa = await loadCa(file(STORE_PKI_FILES.storeCaCert), file(STORE_PKI_FILES.storeCaKey), now);
  const frontProxyCa = await loadCa(file(STORE_PKI_FILES.frontProxyCaCert), file(STORE_PKI_FILES.frontProxyCaKey), now);
  const saKeyPem = await readIfPresent(file(STORE_PKI_FILES.serviceAccountKey));
  const saPubPem = await readIfPresent(file(STORE_PKI_FILES.serviceAccountPublicKey));
  if (saKeyPem === null && saPubPem !== null) {
    throw new CertificateError('SHARED_PKI_MISSING', `${file(STORE_PKI_FILES.serviceAccountPublicKey)} exists but its key ${file(STORE_PKI_FILES.serviceAccountKey)} does not; restore the key (a new one would invalidate every service-account token issued)`, { path: file(STORE_PKI_FILES.serviceAccountKey) });
  }
  const [clusterKey, storeKey, frontProxyKey, sa] = await Promise.all([
    clusterCa === null ? generateRsaPrivateKeyPem() : '',
    storeCa === null ? generateRsaPrivateKeyPem() : '',
    frontProxyCa === null ? generateRsaPrivateKeyPem() : '',
    saKeyPem === null ? generateServiceAccountKeyPair() : null,
  ]);
  if (clusterCa === null) {
    await writePair(file(PKI_FILES.caCert), file(PKI_FILES.caKey), { certPem: buildAndSign(caTemplate(now), clusterKey, null), keyPem: clusterKey });
    written.push(PKI_FILES.caCert, PKI_FILES.caKey);
  }
  if (storeCa === null) {
    await writePair(file(STORE_PKI_FILES.storeCaCert), file(STORE_PKI_FILES.storeCaKey), { certPem: buildAndSign(caTemplate(now, STORE_CA_COMMON_NAME), storeKey, null), keyPem: storeKey });
    written.push(STORE_PKI_FILES.storeCaCert, STORE_PKI_FILES.storeCaKey);
  }
  if (frontProxyCa === null) {
    await writePair(file(STORE_PKI_FILES.frontProxyCaCert), file(STORE_PKI_FILES.frontProxyCaKey), { certPem: buildAndSign(caTemplate(now, FRONT_PROXY_CA_COMMON_NAME), frontProxyKey, null), keyPem: frontProxyKey });
    written.push(STORE_PKI_FILES.frontProxyCaCert, STORE_PKI_FILES.frontProxyCaKey);
  }
  if (sa !== null) {
    await writeFileAtomically(file(STORE_PKI_FILES.serviceAccountKey), sa.privateKeyPem, 0o600);
    await writeFileAtomically(file(STORE_PKI_FILES.serviceAccountPublicKey), sa.publicKeyPem, 0o644);
    written.push(STORE_PKI_FILES.serviceAccountKey, STORE_PKI_FILES.serviceAccountPublicKey);
  } else if (saPubPem === null) {
    // A crash between the two writes: the public key follows from the private one.
    const pair = await loadServiceAccountKeyPair(pkiDir, { derivePublic: true });
    await writeFileAtomically(file(STORE_PKI_FILES.serviceAccountPublicKey), pair.publicKeyPem, 0o644);
    written.push(STORE_PKI_FILES.serviceAccountPublicKey);
  }
  return written;
}

/**
 * Copies the shared files from one pki directory to another (a new member's), returning those
 * written; a source from an earlier build without the front-proxy CA gives the rest. A
 * destination file that already holds the same bytes is left; one that differs is
 * SHARED_PKI_MISMATCH: replacing a CA under a replica would orphan everything issued from it.
 */
export async function copySharedPki(fromPkiDir: string, toPkiDir: string): Promise<string[]> {
  const missing = await missingSharedPkiFiles(fromPkiDir);
  if (missing.length > 0) {
    throw new CertificateError('SHARED_PKI_MISSING', `${fromPkiDir} lacks ${missing.join(', ')}: it is not a complete shared PKI`, { path: fromPkiDir });
  }
  const sources = new Map<string, string>();
  for (const name of SHARED_PKI_FILES) {
    const source = await readIfPresent(path.join(fromPkiDir, name));
    if (source === null) continue;
    const existing = await readIfPresent(path.join(toPkiDir, name));
    if (existing !== null && existing !== source) {
      throw new CertificateError('SHARED_PKI_MISMATCH', `${path.join(toPkiDir, name)} differs from ${path.join(fromPkiDir, name)}; it belongs to another cluster (move it away to take this one's)`, { path: path.join(toPkiDir, name) });
    }
    if (existing === null) sources.set(name, source);
  }
  await makePkiDirectories(toPkiDir);
  // Keys first, as everywhere: a crash leaves a key without its certificate, which reads as "missing".
  const order = [...sources.keys()].sort((a, b) => Number(isKeyFile(b)) - Number(isKeyFile(a)));
  for (const name of order) await writeFileAtomically(path.join(toPkiDir, name), sources.get(name) as string, isKeyFile(name) ? 0o600 : 0o644);
  return order;
}

// ---------------------------------------------------------------------------------------------
// Service-account signing keys

export interface ServiceAccountKeyPair {
  /** PKCS#8 PEM ("PRIVATE KEY"). */
  privateKeyPem: string;
  /** SPKI PEM ("PUBLIC KEY"). */
  publicKeyPem: string;
}

/** A new RSA 2048 pair for signing service-account tokens, as kubeadm's sa.key/sa.pub. */
export async function generateServiceAccountKeyPair(): Promise<ServiceAccountKeyPair> {
  const pair = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKeyPem: pair.privateKey, publicKeyPem: pair.publicKey };
}

/**
 * The shared service-account key pair from `pkiDir`. The public key must be the private key's
 * (a mismatch is CA_INVALID's sibling: DAMAGED_FILE), so a token signed by any replica verifies
 * on all of them.
 */
export async function loadServiceAccountKeyPair(pkiDir: string, options: { derivePublic?: boolean } = {}): Promise<ServiceAccountKeyPair> {
  const keyFile = path.join(pkiDir, STORE_PKI_FILES.serviceAccountKey);
  const pubFile = path.join(pkiDir, STORE_PKI_FILES.serviceAccountPublicKey);
  const privateKeyPem = await readIfPresent(keyFile);
  if (privateKeyPem === null) throw new CertificateError('SHARED_PKI_MISSING', `${keyFile} is missing`, { path: keyFile });
  let derived: string;
  try {
    derived = createPublicKey(createPrivateKey(privateKeyPem)).export({ type: 'spki', format: 'pem' }).toString();
  } catch (error) {
    throw new CertificateError('DAMAGED_FILE', `${keyFile} is not a readable PEM private key (${(error as Error).message})`, { path: keyFile, cause: error });
  }
  if (options.derivePublic === true) return { privateKeyPem, publicKeyPem: derived };
  const publicKeyPem = await readIfPresent(pubFile);
  if (publicKeyPem === null) throw new CertificateError('SHARED_PKI_MISSING', `${pubFile} is missing`, { path: pubFile });
  let matches: boolean;
  try {
    matches = createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' }).equals(createPublicKey(derived).export({ type: 'spki', format: 'der' }));
  } catch (error) {
    throw new CertificateError('DAMAGED_FILE', `${pubFile} is not a readable PEM public key (${(error as Error).message})`, { path: pubFile, cause: error });
  }
  if (!matches) throw new CertificateError('DAMAGED_FILE', `${pubFile} is not the public key of ${keyFile}`, { path: pubFile });
  return { privateKeyPem, publicKeyPem };
}

// ---------------------------------------------------------------------------------------------
// The store's leaves

export interface StoreCertificateNames {
  /** Added to DEFAULT_STORE_DNS_NAMES. */
  dnsNames?: readonly string[];
  /** Added to DEFAULT_STORE_IP_ADDRESSES. */
  ipAddresses?: readonly string[];
}

export interface StoreCertificates {
  /** The store CA's certificate (PEM): what both ports trust. */
  caCertPem: string;
  server: CertificateAndKey;
  peer: CertificateAndKey;
  client: CertificateAndKey;
  outcome: { server: CertificateOutcome; peer: CertificateOutcome; client: CertificateOutcome };
}

/** Defaults plus `names`, validated, deduplicated, in a stable order. */
function storeSubjectAltNames(names: StoreCertificateNames): SubjectAltNames {
  const dnsNames: string[] = [];
  for (const name of [...DEFAULT_STORE_DNS_NAMES, ...(names.dnsNames ?? [])]) {
    if (name.length > 253 || !DNS_NAME.test(name)) throw new CertificateError('INVALID_NAME', `not a DNS name for a store certificate: ${JSON.stringify(name)}`);
    const lower = name.toLowerCase();
    if (!dnsNames.includes(lower)) dnsNames.push(lower);
  }
  const ipAddresses: string[] = [];
  for (const ip of [...DEFAULT_STORE_IP_ADDRESSES, ...(names.ipAddresses ?? [])]) {
    const canonical = canonicalIp(ip);
    if (canonical === null) throw new CertificateError('INVALID_NAME', `not an IP address for a store certificate: ${JSON.stringify(ip)}`);
    if (!ipAddresses.includes(canonical)) ipAddresses.push(canonical);
  }
  return { dnsNames, ipAddresses };
}

/**
 * The names a replica's store certificates need: the hosts of its addresses (a wildcard bind
 * address names no host and is left out) and this machine's host name.
 */
export function storeNamesForAddresses(addresses: readonly string[], hostname: string = os.hostname()): StoreCertificateNames {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  const add = (host: string): void => {
    if (host === '' || host === '0.0.0.0' || host === '::') return;
    if (canonicalIp(host) !== null) ipAddresses.push(host);
    else if (DNS_NAME.test(host) && host.length <= 253) dnsNames.push(host);
  };
  for (const address of addresses) {
    const hostPort = address.replace(/^[a-z]+:\/\//, '').replace(/\/+$/, '');
    const colon = hostPort.lastIndexOf(':');
    add((colon < 0 ? hostPort : hostPort.slice(0, colon)).replace(/^\[|\]$/g, ''));
  }
  add(hostname);
  return { dnsNames, ipAddresses };
}

function storeLeafTemplate(now: Date, ca: forge.pki.Certificate, commonName: string, usage: 'both' | 'client', sans: SubjectAltNames | null): CertificateTemplate {
  const extensions: object[] = [
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    usage === 'both' ? { name: 'extKeyUsage', serverAuth: true, clientAuth: true } : { name: 'extKeyUsage', clientAuth: true },
  ];
  if (sans !== null) {
    extensions.push({
      name: 'subjectAltName',
      altNames: [...sans.dnsNames.map((value) => ({ type: 2, value })), ...sans.ipAddresses.map((ip) => ({ type: 7, ip }))],
    });
  }
  return { subject: [{ shortName: 'CN', value: commonName }], ...leafValidity(now, ca), extensions };
}

function leafFits(cert: ParsedCertificate, commonName: string, usage: 'both' | 'client', sans: SubjectAltNames | null): boolean {
  const names = subjectValues(cert, 'CN');
  if (names.length !== 1 || names[0] !== commonName) return false;
  if (!hasExtendedKeyUsage(cert, OID_CLIENT_AUTH)) return false;
  if (usage === 'both' && !hasExtendedKeyUsage(cert, OID_SERVER_AUTH)) return false;
  if (sans === null) return true;
  const present = certificateSans(cert);
  return sans.dnsNames.every((name) => present.dns.has(name)) && sans.ipAddresses.every((ip) => present.ips.has(ip));
}

/**
 * Loads this replica's store certificates from `pkiDir`, issuing from the store CA those that
 * are missing or no longer fit (a name of `names` missing, expiring, another issuer). The store
 * CA must be there: SHARED_PKI_MISSING otherwise.
 */
export async function loadOrCreateStoreCertificates(pkiDir: string, names: StoreCertificateNames = {}, options: IssueOptions = {}): Promise<StoreCertificates> {
  const now = options.now ?? new Date();
  const sans = storeSubjectAltNames(names);
  const file = (name: string): string => path.join(pkiDir, name);
  const ca = await loadCa(file(STORE_PKI_FILES.storeCaCert), file(STORE_PKI_FILES.storeCaKey), now);
  if (ca === null) await requireSharedPki(pkiDir);
  const storeCa = ca as NonNullable<typeof ca>;
  await makePkiDirectories(pkiDir);
  const leaves = [
    { cert: STORE_PKI_FILES.serverCert, key: STORE_PKI_FILES.serverKey, cn: STORE_SERVER_COMMON_NAME, usage: 'both' as const, sans },
    { cert: STORE_PKI_FILES.peerCert, key: STORE_PKI_FILES.peerKey, cn: STORE_PEER_COMMON_NAME, usage: 'both' as const, sans },
    { cert: STORE_PKI_FILES.clientCert, key: STORE_PKI_FILES.clientKey, cn: STORE_CLIENT_COMMON_NAME, usage: 'client' as const, sans: null },
  ];
  const loaded: LoadedLeaf[] = [];
  for (const leaf of leaves) loaded.push(await loadLeaf(file(leaf.cert), file(leaf.key), storeCa, now, (cert) => leafFits(cert, leaf.cn, leaf.usage, leaf.sans)));
  const keys = await Promise.all(loaded.map((l) => (l.state === 'fits' ? '' : generateRsaPrivateKeyPem())));
  // Parsed by node-forge only to issue: a start that reuses every certificate does not load it.
  let caCert: ReturnType<typeof parseForgeCertificate> | undefined;
  const pairs: CertificateAndKey[] = [];
  for (let i = 0; i < leaves.length; i++) {
    const state = loaded[i];
    if (state.state === 'fits') {
      pairs.push(state.pair);
      continue;
    }
    const leaf = leaves[i];
    caCert ??= parseForgeCertificate(storeCa.pair.certPem);
    const pair = { certPem: buildAndSign(storeLeafTemplate(now, caCert, leaf.cn, leaf.usage, leaf.sans), keys[i], { cert: caCert, keyPem: storeCa.pair.keyPem }), keyPem: keys[i] };
    await writePair(file(leaf.cert), file(leaf.key), pair);
    pairs.push(pair);
  }
  const outcome = (l: LoadedLeaf): CertificateOutcome => ({ missing: 'created', stale: 'reissued', fits: 'reused' } as const)[l.state];
  return {
    caCertPem: storeCa.pair.certPem,
    server: pairs[0],
    peer: pairs[1],
    client: pairs[2],
    outcome: { server: outcome(loaded[0]), peer: outcome(loaded[1]), client: outcome(loaded[2]) },
  };
}

// ---------------------------------------------------------------------------------------------
// The front proxy

export interface FrontProxyCertificates {
  /** The front-proxy CA's certificate (PEM): the request-header CA extension API servers trust. */
  caCertPem: string;
  /** The aggregator's client certificate (CN front-proxy-client). */
  client: CertificateAndKey;
  outcome: { ca: CertificateOutcome; client: CertificateOutcome };
}

/**
 * Loads the front-proxy CA and this replica's front-proxy-client certificate from `pkiDir`,
 * issuing the certificate when it is missing or no longer fits. A pki directory without the CA
 * (a cluster made by an earlier build) gets one made here, as this replica's.
 */
export async function loadOrCreateFrontProxyCertificates(pkiDir: string, options: IssueOptions = {}): Promise<FrontProxyCertificates> {
  const now = options.now ?? new Date();
  const file = (name: string): string => path.join(pkiDir, name);
  await makePkiDirectories(pkiDir);
  let ca = await loadCa(file(STORE_PKI_FILES.frontProxyCaCert), file(STORE_PKI_FILES.frontProxyCaKey), now);
  const caOutcome: CertificateOutcome = ca === null ? 'created' : 'reused';
  if (ca === null) {
    const keyPem = await generateRsaPrivateKeyPem();
    await writePair(file(STORE_PKI_FILES.frontProxyCaCert), file(STORE_PKI_FILES.frontProxyCaKey), { certPem: buildAndSign(caTemplate(now, FRONT_PROXY_CA_COMMON_NAME), keyPem, null), keyPem });
    ca = await loadCa(file(STORE_PKI_FILES.frontProxyCaCert), file(STORE_PKI_FILES.frontProxyCaKey), now);
  }
  const frontProxyCa = ca as NonNullable<typeof ca>;
  const leaf = await loadLeaf(file(STORE_PKI_FILES.frontProxyClientCert), file(STORE_PKI_FILES.frontProxyClientKey), frontProxyCa, now, (cert) => leafFits(cert, FRONT_PROXY_CLIENT_COMMON_NAME, 'client', null));
  let client: CertificateAndKey;
  if (leaf.state === 'fits') {
    client = leaf.pair;
  } else {
    const keyPem = await generateRsaPrivateKeyPem();
    const caCert = parseForgeCertificate(frontProxyCa.pair.certPem);
    client = { certPem: buildAndSign(storeLeafTemplate(now, caCert, FRONT_PROXY_CLIENT_COMMON_NAME, 'client', null), keyPem, { cert: caCert, keyPem: frontProxyCa.pair.keyPem }), keyPem };
    await writePair(file(STORE_PKI_FILES.frontProxyClientCert), file(STORE_PKI_FILES.frontProxyClientKey), client);
  }
  const clientOutcome = ({ missing: 'created', stale: 'reissued', fits: 'reused' } as const)[leaf.state];
  return { caCertPem: frontProxyCa.pair.certPem, client, outcome: { ca: caOutcome, client: clientOutcome } };
}

/**
 * A client certificate of the store from `storeCa` (clientAuth, one year): for an operator's
 * machine, or a test. `commonName` only labels it: the store authenticates, it does not authorize.
 */
export async function issueStoreClientCertificate(storeCa: CertificateAndKey, commonName: string, options: IssueOptions = {}): Promise<CertificateAndKey> {
  const keyPem = await generateRsaPrivateKeyPem();
  const caCert = parseForgeCertificate(storeCa.certPem);
  const now = options.now ?? new Date();
  return { certPem: buildAndSign(storeLeafTemplate(now, caCert, commonName, 'client', null), keyPem, { cert: caCert, keyPem: storeCa.keyPem }), keyPem };
}

/**
 * A certificate for a store server or peer from `storeCa` (serverAuth and clientAuth) naming
 * `names`: for tests that start a server or a transport without a data directory.
 */
export async function issueStorePeerCertificate(storeCa: CertificateAndKey, names: StoreCertificateNames = {}, options: IssueOptions = {}): Promise<CertificateAndKey> {
  const keyPem = await generateRsaPrivateKeyPem();
  const caCert = parseForgeCertificate(storeCa.certPem);
  const now = options.now ?? new Date();
  return { certPem: buildAndSign(storeLeafTemplate(now, caCert, STORE_PEER_COMMON_NAME, 'both', storeSubjectAltNames(names)), keyPem, { cert: caCert, keyPem: storeCa.keyPem }), keyPem };
}

/** A new store CA (CN carina-store-ca, ten years), for `carina pki init` and tests. */
export async function createStoreCa(options: IssueOptions = {}): Promise<CertificateAndKey> {
  const keyPem = await generateRsaPrivateKeyPem();
  return { certPem: buildAndSign(caTemplate(options.now ?? new Date(), STORE_CA_COMMON_NAME), keyPem, null), keyPem };
}
