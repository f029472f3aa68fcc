import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import forge from 'node-forge';
import {
  ADMIN_KUBECONFIG_NAME,
  CertificateError,
  DEFAULT_SERVING_DNS_NAMES,
  PKI_FILES,
  apiServerUrl,
  createClusterCa,
  currentContextCredentials,
  issueClientCertificate,
  loadOrCreateClusterCertificates,
  loadOrIssueClientCertificate,
  parseKubeconfig,
  readKubeconfig,
  writeAdminKubeconfig,
  type CertificateAndKey,
  type ClusterCertificates,
  type KubeconfigCredentials,
} from '../../../../src/certificates';
import { canonicalIp, certificateSans, certificateValidity, issueServingCertificate, parseCertificateFile, subjectValues as parsedSubjectValues } from '../../../../src/certificates/cluster-ca';

const execFileAsync = promisify(execFile);
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const DAY_MS = 24 * 60 * 60 * 1000;

async function readPki(dataDir: string): Promise<Record<string, Buffer>> {
  const contents: Record<string, Buffer> = {};
  for (const name of Object.values(PKI_FILES)) contents[name] = await fs.readFile(path.join(dataDir, 'pki', name));
  return contents;
}

function subjectValues(certPem: string, shortName: string): string[] {
  return forge.pki
    .certificateFromPem(certPem)
    .subject.attributes.filter((attribute) => attribute.shortName === shortName)
    .map((attribute) => String(attribute.value));
}

function extension(certPem: string, name: string): Record<string, unknown> | undefined {
  const found: unknown = forge.pki.certificateFromPem(certPem).getExtension(name);
  return typeof found === 'object' && found !== null ? (found as Record<string, unknown>) : undefined;
}

function issuedBy(leafPem: string, caPem: string): boolean {
  const leaf = new X509Certificate(leafPem);
  const ca = new X509Certificate(caPem);
  return leaf.checkIssued(ca) && leaf.verify(ca.publicKey);
}

async function expectCertificateError(promise: Promise<unknown>, code: string): Promise<CertificateError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(CertificateError);
    expect((error as CertificateError).code).to.equal(code);
    return error as CertificateError;
  }
  throw new Error(`expected a CertificateError ${code}`);
}

describe('certificates: a first load of the cluster certificates', () => {
  let dataDir: string;
  let set: ClusterCertificates;

  before(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'carina-pki-'));
    set = await loadOrCreateClusterCertificates(dataDir, { serving: { dnsNames: ['carina.example'], ipAddresses: ['10.96.0.1'] } });
  });

  after(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('creates the whole set, with the keys readable by the owner only', async () => {
    expect(set.outcome).to.deep.equal({ ca: 'created', serving: 'created', admin: 'created' });
    expect(set.dir).to.equal(path.join(dataDir, 'pki'));

    const onDisk = await readPki(dataDir);
    expect(onDisk[PKI_FILES.caCert].toString()).to.equal(set.ca.certPem);
    expect(onDisk[PKI_FILES.servingKey].toString()).to.equal(set.serving.keyPem);
    for (const name of [PKI_FILES.caKey, PKI_FILES.servingKey, PKI_FILES.adminKey]) {
      expect((await fs.stat(path.join(set.dir, name))).mode & 0o777, name).to.equal(0o600);
    }
    expect((await fs.stat(set.dir)).mode & 0o777).to.equal(0o700);
    expect((await fs.readdir(set.dir)).sort()).to.deep.equal(Object.values(PKI_FILES).sort());
  });

  it('makes a ten-year self-signed RSA 2048 CA named carina-ca, with CA constraints and a key identifier', () => {
    const { ca } = set;
    const x509 = new X509Certificate(ca.certPem);
    expect(x509.ca).to.equal(true);
    expect(x509.subject).to.equal('CN=carina-ca');
    expect(x509.issuer).to.equal('CN=carina-ca');
    expect(x509.verify(x509.publicKey)).to.equal(true);
    expect(x509.publicKey.asymmetricKeyDetails?.modulusLength).to.equal(2048);
    const years = (Date.parse(x509.validTo) - Date.now()) / (365 * DAY_MS);
    expect(years).to.be.within(9.9, 10.1);
    expect(extension(ca.certPem, 'basicConstraints')).to.include({ cA: true, critical: true });
    expect(extension(ca.certPem, 'keyUsage')).to.include({ keyCertSign: true, cRLSign: true });
    expect(extension(ca.certPem, 'subjectKeyIdentifier')).to.not.equal(undefined);
    // Positive 16-byte serials whose DER encoding is minimal (Go's parser refuses anything else), different each time.
    const serials = [set.ca, set.serving, set.admin].map((pair) => new X509Certificate(pair.certPem).serialNumber);
    for (const serial of serials) {
      expect(serial).to.match(/^[0-9A-F]{32}$/);
      expect(parseInt(serial.slice(0, 2), 16)).to.be.within(1, 0x7f);
    }
    expect(new Set(serials).size).to.equal(3);
  });

  it('issues a one-year serverAuth serving certificate from the CA with the default and the requested SANs', () => {
    const { ca, serving } = set;
    expect(issuedBy(serving.certPem, ca.certPem)).to.equal(true);
    const x509 = new X509Certificate(serving.certPem);
    expect(x509.ca).to.equal(false);
    for (const name of [...DEFAULT_SERVING_DNS_NAMES, 'carina.example']) expect(x509.checkHost(name), name).to.equal(name);
    for (const ip of ['127.0.0.1', '::1', '10.96.0.1']) expect(x509.checkIP(ip), ip).to.equal(ip);
    expect(x509.checkHost('elsewhere.example')).to.equal(undefined);
    expect(x509.keyUsage).to.deep.equal([SERVER_AUTH]);
    const days = (Date.parse(x509.validTo) - Date.now()) / DAY_MS;
    expect(days).to.be.within(364, 366);
    expect(x509.checkPrivateKey(createPrivateKey(serving.keyPem))).to.equal(true);
  });

  it('issues the admin client certificate: CN system:admin, O system:masters, clientAuth', () => {
    const { ca, admin } = set;
    expect(issuedBy(admin.certPem, ca.certPem)).to.equal(true);
    expect(subjectValues(admin.certPem, 'CN')).to.deep.equal(['system:admin']);
    expect(subjectValues(admin.certPem, 'O')).to.deep.equal(['system:masters']);
    expect(new X509Certificate(admin.certPem).keyUsage).to.deep.equal([CLIENT_AUTH]);
  });

  it('issues client certificates with one O per group', async () => {
    const ca = await createClusterCa();
    const client = await issueClientCertificate(ca, { user: 'jane', groups: ['dev', 'ops'] });
    expect(issuedBy(client.certPem, ca.certPem)).to.equal(true);
    expect(subjectValues(client.certPem, 'CN')).to.deep.equal(['jane']);
    expect(subjectValues(client.certPem, 'O')).to.deep.equal(['dev', 'ops']);
  });
});

describe('certificates: later loads of the cluster certificates', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'carina-pki-'));
  });

  afterEach(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('reuses an existing valid set unchanged, byte for byte and without rewriting the files', async () => {
    await loadOrCreateClusterCertificates(dataDir, { serving: { ipAddresses: ['192.0.2.7'] } });
    const before = await readPki(dataDir);
    const mtimes = await Promise.all(Object.values(PKI_FILES).map(async (name) => (await fs.stat(path.join(dataDir, 'pki', name))).mtimeMs));
    // The same IP spelled differently is the same SAN.
    const again = await loadOrCreateClusterCertificates(dataDir, { serving: { ipAddresses: ['192.0.2.7', '0:0:0:0:0:0:0:1'] } });
    expect(again.outcome).to.deep.equal({ ca: 'reused', serving: 'reused', admin: 'reused' });
    expect(await readPki(dataDir)).to.deep.equal(before);
    expect(await Promise.all(Object.values(PKI_FILES).map(async (name) => (await fs.stat(path.join(dataDir, 'pki', name))).mtimeMs))).to.deep.equal(mtimes);
  });

  it('reissues the serving certificate from the same CA when a requested SAN is missing, and keeps the rest', async () => {
    await loadOrCreateClusterCertificates(dataDir);
    const before = await readPki(dataDir);
    const next = await loadOrCreateClusterCertificates(dataDir, { serving: { dnsNames: ['api.carina.test'], ipAddresses: ['198.51.100.3'] } });
    expect(next.outcome).to.deep.equal({ ca: 'reused', serving: 'reissued', admin: 'reused' });
    const after = await readPki(dataDir);
    for (const name of [PKI_FILES.caCert, PKI_FILES.caKey, PKI_FILES.adminCert, PKI_FILES.adminKey]) expect(after[name], name).to.deep.equal(before[name]);
    expect(after[PKI_FILES.servingCert]).to.not.deep.equal(before[PKI_FILES.servingCert]);
    expect(issuedBy(next.serving.certPem, before[PKI_FILES.caCert].toString())).to.equal(true);
    const x509 = new X509Certificate(next.serving.certPem);
    expect(x509.checkHost('api.carina.test')).to.equal('api.carina.test');
    expect(x509.checkHost('kubernetes.default.svc')).to.equal('kubernetes.default.svc');
    expect(x509.checkIP('198.51.100.3')).to.equal('198.51.100.3');
    expect((await fs.stat(path.join(next.dir, PKI_FILES.servingKey))).mode & 0o777).to.equal(0o600);
    expect((await loadOrCreateClusterCertificates(dataDir, { serving: { dnsNames: ['API.carina.test'] } })).outcome.serving).to.equal('reused');
  });

  it('reissues leaves that are about to expire, and issues leaves whose files are gone, from the same CA', async () => {
    const first = await loadOrCreateClusterCertificates(dataDir);
    const later = await loadOrCreateClusterCertificates(dataDir, { now: new Date(Date.now() + 340 * DAY_MS) });
    expect(later.outcome).to.deep.equal({ ca: 'reused', serving: 'reissued', admin: 'reissued' });
    expect(later.ca).to.deep.equal(first.ca);
    expect(issuedBy(later.admin.certPem, first.ca.certPem)).to.equal(true);

    await fs.rm(path.join(dataDir, 'pki', PKI_FILES.adminCert));
    await fs.rm(path.join(dataDir, 'pki', PKI_FILES.servingKey));
    const healed = await loadOrCreateClusterCertificates(dataDir);
    expect(healed.outcome).to.deep.equal({ ca: 'reused', serving: 'reissued', admin: 'created' });
    expect(issuedBy(healed.serving.certPem, first.ca.certPem)).to.equal(true);
  });

  it('refuses, with a code, a damaged key file, a CA without its key, a foreign CA key and a bad SAN, leaving the files alone', async () => {
    await loadOrCreateClusterCertificates(dataDir);
    const pki = path.join(dataDir, 'pki');

    await fs.writeFile(path.join(pki, PKI_FILES.adminKey), 'not a key\n');
    const error = await expectCertificateError(loadOrCreateClusterCertificates(dataDir), 'DAMAGED_FILE');
    expect(error.path).to.equal(path.join(pki, PKI_FILES.adminKey));
    expect(await fs.readFile(path.join(pki, PKI_FILES.adminKey), 'utf8')).to.equal('not a key\n');
    await fs.rm(path.join(pki, PKI_FILES.adminKey));

    const caKey = await fs.readFile(path.join(pki, PKI_FILES.caKey));
    await fs.writeFile(path.join(pki, PKI_FILES.caKey), (await createClusterCa()).keyPem);
    await expectCertificateError(loadOrCreateClusterCertificates(dataDir), 'CA_INVALID');
    await fs.rm(path.join(pki, PKI_FILES.caKey));
    await expectCertificateError(loadOrCreateClusterCertificates(dataDir), 'CA_KEY_MISSING');
    await fs.writeFile(path.join(pki, PKI_FILES.caKey), caKey);

    await expectCertificateError(loadOrCreateClusterCertificates(dataDir, { serving: { ipAddresses: ['not-an-ip'] } }), 'INVALID_NAME');
    await expectCertificateError(loadOrCreateClusterCertificates(dataDir, { serving: { dnsNames: ['bad name'] } }), 'INVALID_NAME');
    // A certificate whose key is gone is issued again.
    expect((await loadOrCreateClusterCertificates(dataDir)).outcome).to.deep.equal({ ca: 'reused', serving: 'reused', admin: 'reissued' });
  });
});

describe('certificates: the server\'s own client certificates kept in the data directory', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'carina-pki-'));
  });

  afterEach(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('issues one on the first load and gives the same pair back on the next, byte for byte', async () => {
    const { ca } = await loadOrCreateClusterCertificates(dataDir);
    const identity = { user: 'kube-apiserver-kubelet-client', groups: ['system:masters'] };
    const first = await loadOrIssueClientCertificate(dataDir, ca, identity, 'apiserver-kubelet-client');
    const x509 = new X509Certificate(first.certPem);
    expect(x509.checkIssued(new X509Certificate(ca.certPem))).to.equal(true);
    expect(x509.subject).to.include('CN=kube-apiserver-kubelet-client');
    expect((await fs.stat(path.join(dataDir, 'pki', 'apiserver-kubelet-client.key'))).mode & 0o777).to.equal(0o600);
    const again = await loadOrIssueClientCertificate(dataDir, ca, identity, 'apiserver-kubelet-client');
    expect(again).to.deep.equal(first);
  });

  it('issues again for another identity and from another CA', async () => {
    const { ca } = await loadOrCreateClusterCertificates(dataDir);
    const first = await loadOrIssueClientCertificate(dataDir, ca, { user: 'some-client', groups: [] }, 'some-client');
    const otherUser = await loadOrIssueClientCertificate(dataDir, ca, { user: 'someone-else', groups: [] }, 'some-client');
    expect(otherUser.certPem).to.not.equal(first.certPem);
    expect(new X509Certificate(otherUser.certPem).subject).to.include('CN=someone-else');
    const otherCa = await createClusterCa();
    const fromOtherCa = await loadOrIssueClientCertificate(dataDir, otherCa, { user: 'someone-else', groups: [] }, 'some-client');
    expect(new X509Certificate(fromOtherCa.certPem).checkIssued(new X509Certificate(otherCa.certPem))).to.equal(true);
  });
});

describe('certificates: admin kubeconfig', () => {
  let dataDir: string;
  let set: ClusterCertificates;

  before(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'carina-kubeconfig-'));
    set = await loadOrCreateClusterCertificates(dataDir);
  });

  after(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('writes admin.kubeconfig with mode 0600 and reads it back', async () => {
    const file = await writeAdminKubeconfig(dataDir, set, apiServerUrl('127.0.0.1', 6443));
    expect(file).to.equal(path.join(dataDir, ADMIN_KUBECONFIG_NAME));
    expect((await fs.stat(file)).mode & 0o777).to.equal(0o600);
    const text = await fs.readFile(file, 'utf8');
    // Every string double-quoted, so YAML 1.1 readers never take one for a boolean or a number.
    expect(text).to.match(/^apiVersion: "v1"\nkind: "Config"\nclusters:\n  - name: "carina"\n    cluster:\n      server: "https:\/\/127\.0\.0\.1:6443"\n/);
    const config = await readKubeconfig(file);
    expect(config['current-context']).to.equal('carina');
    expect(config.users.map((user) => user.name)).to.deep.equal(['system:admin']);
    expect(currentContextCredentials(config)).to.deep.equal({
      server: 'https://127.0.0.1:6443',
      caCertPem: set.ca.certPem,
      clientCertPem: set.admin.certPem,
      clientKeyPem: set.admin.keyPem,
    });
  });

  it('brackets an IPv6 host in the server URL', () => {
    expect(apiServerUrl('::1', 6443)).to.equal('https://[::1]:6443');
    expect(apiServerUrl('carina.example', 443)).to.equal('https://carina.example:443');
  });

  it('reads hand-edited YAML, and refuses what is not YAML or not a complete kubeconfig', () => {
    const handEdited = [
      '# edited by hand',
      'apiVersion: v1',
      'kind: Config',
      'current-context: carina   # the only one',
      'clusters:',
      '  - name: carina',
      '    cluster:',
      "      server: 'https://10.0.0.1:6443'",
      '      certificate-authority-data: QUJD',
      'users:',
      '- name: system:admin',
      '  user:',
      '    client-certificate-data: "REVG"',
      '    client-key-data: R0hJ',
      'contexts:',
      '- context:',
      '    cluster: carina',
      '    user: system:admin',
      '  name: carina',
      '',
    ].join('\r\n');
    expect(currentContextCredentials(parseKubeconfig(handEdited))).to.deep.equal({ server: 'https://10.0.0.1:6443', caCertPem: 'ABC', clientCertPem: 'DEF', clientKeyPem: 'GHI' });
    expect(() => parseKubeconfig('apiVersion: v1\n  kind: Config\n')).to.throw(/^not YAML/);
    expect(() => parseKubeconfig('apiVersion: v1\nkind: Config\nclusters: {a: [1}\n')).to.throw(/^not YAML/);
    expect(() => parseKubeconfig('apiVersion: v1\nkind: Config\n')).to.throw(/current-context is missing/);
  });
});

describe('certificates: TLS with the issued certificates', function () {
  this.timeout(60_000);
  let dataDir: string;
  let set: ClusterCertificates;
  let credentials: KubeconfigCredentials;
  let kubeconfigFile: string;
  let server: https.Server;
  let port: number;
  let handled: number;

  before(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'carina-tls-'));
    set = await loadOrCreateClusterCertificates(dataDir);
    handled = 0;
    // Client certificates required and checked against the cluster CA, as the API server will.
    server = https.createServer({ cert: set.serving.certPem, key: set.serving.keyPem, ca: set.ca.certPem, requestCert: true, rejectUnauthorized: true }, (request, response) => {
      handled += 1;
      const peer = (request.socket as TLSSocket).getPeerCertificate();
      const organization = peer.subject.O;
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ user: peer.subject.CN, groups: Array.isArray(organization) ? organization : [organization] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    kubeconfigFile = await writeAdminKubeconfig(dataDir, set, apiServerUrl('127.0.0.1', port));
    credentials = currentContextCredentials(await readKubeconfig(kubeconfigFile));
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  function get(client: Partial<CertificateAndKey>, servername?: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const request = https.request(
        { host: '127.0.0.1', port, path: '/whoami', agent: false, ca: credentials.caCertPem, cert: client.certPem, key: client.keyPem, servername },
        (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (body += chunk));
          response.on('end', () => resolve(body));
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end();
    });
  }

  it('completes the handshake with the admin certificate from the written kubeconfig, and the server sees system:admin', async () => {
    const admin = { certPem: credentials.clientCertPem, keyPem: credentials.clientKeyPem };
    expect(JSON.parse(await get(admin))).to.deep.equal({ user: 'system:admin', groups: ['system:masters'] });
    // The in-cluster name verifies too.
    expect(JSON.parse(await get(admin, 'kubernetes.default.svc'))).to.deep.equal({ user: 'system:admin', groups: ['system:masters'] });
  });

  it('refuses a client whose certificate comes from another CA, and one without a certificate', async () => {
    const before = handled;
    const foreignCa = await createClusterCa();
    const impostor = await issueClientCertificate(foreignCa, { user: 'system:admin', groups: ['system:masters'] });
    const refused = await get(impostor).then(
      () => null,
      (error: unknown) => error as NodeJS.ErrnoException,
    );
    expect(refused, 'a foreign client certificate was accepted').to.not.equal(null);
    expect(String(refused?.code)).to.match(/ECONNRESET|ERR_SSL/);
    const anonymous = await get({}).then(
      () => null,
      (error: unknown) => error as NodeJS.ErrnoException,
    );
    expect(anonymous, 'a client without a certificate was accepted').to.not.equal(null);
    expect(handled).to.equal(before);
  });

  async function kubectl(args: string[]): Promise<string> {
    const home = path.join(dataDir, 'home');
    await fs.mkdir(home, { recursive: true });
    try {
      // HOME is private so kubectl's caches stay out of the real one.
      const { stdout } = await execFileAsync('kubectl', ['--kubeconfig', kubeconfigFile, ...args], { env: { PATH: process.env.PATH ?? '', HOME: home }, timeout: 30_000 });
      return stdout;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new Error('kubectl is not installed: it is a documented requirement of the e2e tests (see the README); install it and run again');
      }
      throw error;
    }
  }

  it('is read by kubectl: current context, server and user', async () => {
    const view = JSON.parse(await kubectl(['config', 'view', '--raw', '-o', 'json'])) as {
      'current-context': string;
      clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
      users: { name: string; user: { 'client-certificate-data': string } }[];
      contexts: { name: string; context: { cluster: string; user: string } }[];
    };
    expect(view['current-context']).to.equal('carina');
    expect(view.clusters.map((cluster) => [cluster.name, cluster.cluster.server])).to.deep.equal([['carina', `https://127.0.0.1:${port}`]]);
    expect(Buffer.from(view.clusters[0].cluster['certificate-authority-data'], 'base64').toString()).to.equal(set.ca.certPem);
    expect(view.users.map((user) => user.name)).to.deep.equal(['system:admin']);
    expect(Buffer.from(view.users[0].user['client-certificate-data'], 'base64').toString()).to.equal(set.admin.certPem);
    expect(view.contexts).to.deep.equal([{ name: 'carina', context: { cluster: 'carina', user: 'system:admin' } }]);
  });

  it('lets kubectl (Go TLS and x509) reach the server with the admin certificate', async () => {
    // Go's parser is stricter than OpenSSL's (serial encoding, SANs): this is the client the certificates are for.
    expect(JSON.parse(await kubectl(['get', '--raw', '/whoami']))).to.deep.equal({ user: 'system:admin', groups: ['system:masters'] });
  });
});

describe('certificates: names and dates of a loaded certificate, read from Node\'s view as node-forge reads them', () => {
  let ca: CertificateAndKey;
  before(async () => {
    ca = await createClusterCa();
  });

  const forgeView = (pem: string) => {
    const cert = forge.pki.certificateFromPem(pem);
    const altNames = ((cert.getExtension('subjectAltName') as { altNames?: Array<{ type: number; value?: string; ip?: string }> } | undefined)?.altNames ?? []);
    return {
      dns: altNames.filter((n) => n.type === 2).map((n) => String(n.value).toLowerCase()).sort(),
      ips: altNames.filter((n) => n.type === 7).map((n) => canonicalIp(String(n.ip))).sort(),
      cn: subjectValues(pem, 'CN'),
      o: subjectValues(pem, 'O'),
      notBefore: cert.validity.notBefore.toISOString(),
      notAfter: cert.validity.notAfter.toISOString(),
    };
  };
  const loadedView = (pem: string) => {
    const parsed = parseCertificateFile('test.crt', pem);
    const sans = certificateSans(parsed);
    const validity = certificateValidity(parsed);
    return {
      dns: [...sans.dns].sort(),
      ips: [...sans.ips].sort(),
      cn: parsedSubjectValues(parsed, 'CN'),
      o: parsedSubjectValues(parsed, 'O'),
      notBefore: validity.notBefore.toISOString(),
      notAfter: validity.notAfter.toISOString(),
    };
  };

  it('a serving certificate: DNS names in any case, IPv4 and IPv6 addresses, validity to the second', async () => {
    const serving = await issueServingCertificate(ca, { dnsNames: ['API.Example.test'], ipAddresses: ['192.0.2.7', 'fd00::10', '::1'] });
    const loaded = loadedView(serving.certPem);
    expect(loaded).to.deep.equal(forgeView(serving.certPem));
    expect(loaded.dns).to.include('api.example.test');
    expect(loaded.ips).to.include.members(['192.0.2.7', 'fd00::10', '::1']);
  });

  it('client certificates: one CN, several O in order, and names Node quotes or escapes (read by node-forge)', async () => {
    for (const identity of [{ user: 'system:node:worker-1', groups: ['system:nodes', 'b-team', 'a-team'] }, { user: 'ja"ne, the \\ admin+1', groups: ['x=y', 'dév'] }]) {
      const client = await issueClientCertificate(ca, identity);
      const loaded = loadedView(client.certPem);
      expect(loaded, identity.user).to.deep.equal(forgeView(client.certPem));
      expect(loaded.cn).to.deep.equal([forgeView(client.certPem).cn[0]]);
      expect(loaded.o).to.have.length(identity.groups.length);
    }
  });
});
