/**
 * What loading the `carina` command costs at every start (issue 32): the packages that only some
 * configurations use (webhooks, OIDC, CRD rules in CEL) are loaded at their first use, not with
 * the command. Each case runs in its own Node process, whose module cache starts empty.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DIST = join(__dirname, '..', '..', '..', '..');

/** Runs `script` in a fresh Node process (MAIN, CODEC, AUTHN and CERTIFICATES name the built modules); returns its JSON output. */
function inFreshProcess(script: string): unknown {
  const built = (...path: string[]) => JSON.stringify(join(DIST, 'src', ...path));
  const prelude = `const MAIN = ${built('cli', 'main.js')}; const CODEC = ${built('codec', 'index.js')}; const AUTHN = ${built('authn', 'index.js')}; const CERTIFICATES = ${built('certificates', 'index.js')};\n`;
  return JSON.parse(execFileSync(process.execPath, ['-e', prelude + script], { encoding: 'utf8' }));
}

const LOADED_PACKAGES = `
  const packages = new Set();
  for (const file of Object.keys(require.cache)) {
    const match = /node_modules[\\\\/]((@[^\\\\/]+[\\\\/])?[^\\\\/]+)/.exec(file);
    if (match) packages.add(match[1].replace('\\\\', '/'));
  }
  process.stdout.write(JSON.stringify([...packages].sort()));
`;

describe('cli: what loading the carina command and starting it load', () => {
  it('loads no package that only webhooks, OIDC or CRD validation rules use', () => {
    const loaded = inFreshProcess(`require(MAIN);\n${LOADED_PACKAGES}`) as string[];
    // Sanity: the command's own dependencies are there, so the list is read right.
    expect(loaded).to.include.members(['@grpc/grpc-js', 'classic-level']);
    expect(loaded).to.not.include.members(['undici']);
    expect(loaded).to.not.include.members(['jose']);
    expect(loaded).to.not.include.members(['@bufbuild/cel']);
    expect(loaded).to.not.include.members(['@bufbuild/protobuf']);
  });

  it('loads neither the chaos suite nor the local-cluster and members commands, which `carina server` does not run', () => {
    const ownFolders = inFreshProcess(`
      require(MAIN);
      const folders = new Set(Object.keys(require.cache).map((file) => /[\\\\/]dist[\\\\/](src[\\\\/][^\\\\/]+)[\\\\/]/.exec(file)?.[1].replace('\\\\', '/')).filter(Boolean));
      process.stdout.write(JSON.stringify([...folders].sort()));
    `) as string[];
    expect(ownFolders).to.include.members(['src/cli', 'src/server']);
    expect(ownFolders).to.not.include.members(['src/chaos']);
    expect(ownFolders).to.not.include.members(['src/cluster']);
  });

  it('answers which kinds have a Protobuf form without building protobufjs\'s Root, and builds it at the first encode', () => {
    const built = inFreshProcess(`
      const protobuf = require('protobufjs');
      let roots = 0;
      const fromJSON = protobuf.Root.fromJSON;
      protobuf.Root.fromJSON = function (...args) { roots++; return fromJSON.apply(this, args); };
      const codec = require(CODEC).ProtobufCodec.load();
      const answers = [codec.supports('v1', 'ConfigMap'), codec.supports('apps/v1', 'Deployment'), codec.supports('v1', 'PodSpec'), codec.messageName('v1', 'Status')];
      const rootsBeforeEncode = roots;
      const body = codec.encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } });
      process.stdout.write(JSON.stringify({ answers, rootsBeforeEncode, rootsAfter: roots, decoded: codec.decode(body) }));
    `);
    expect(built).to.deep.equal({
      answers: [true, true, false, 'k8s.io.apimachinery.pkg.apis.meta.v1.Status'],
      rootsBeforeEncode: 0,
      rootsAfter: 1,
      decoded: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', creationTimestamp: null }, data: { k: 'v' } },
    });
  });

  it('builds the service account issuer discovery, as every start does, without loading jose', () => {
    const outcome = inFreshProcess(`
      const { generateKeyPairSync } = require('node:crypto');
      const authn = require(AUTHN);
      const pem = (type, options) => generateKeyPairSync(type, options).publicKey.export({ type: 'spki', format: 'pem' });
      const keys = authn.parsePublicKeysPem(pem('rsa', { modulusLength: 2048 }) + pem('ec', { namedCurve: 'P-256' }), 'sa.pub');
      authn.buildIssuerDiscovery({ issuer: 'https://kubernetes.default.svc', externalAddress: '10.0.0.1:6443', keys }).then((discovery) => {
        const jwks = JSON.parse(discovery.jwks.body).keys.map((key) => key.kty);
        process.stdout.write(JSON.stringify({ jwks, joseLoaded: Object.keys(require.cache).some((file) => /node_modules[\\\\/]jose[\\\\/]/.test(file)) }));
      });
    `);
    expect(outcome).to.deep.equal({ jwks: ['RSA', 'EC'], joseLoaded: false });
  });

  it('reuses the certificates of a data directory, as a restart does, without loading node-forge', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'carina-module-load-'));
    // The certificates a replica loads at start: the cluster's, the store's, the front proxy's, the kubelet client.
    const loadAll = `
      const certificates = require(CERTIFICATES);
      const dataDir = ${JSON.stringify(dataDir)};
      const pki = certificates.pkiDirectory(dataDir);
      (async () => {
        const created = await certificates.createSharedPki(pki);
        const cluster = await certificates.loadOrCreateClusterCertificates(dataDir, { serving: { ipAddresses: ['192.0.2.7'] } });
        const store = await certificates.loadOrCreateStoreCertificates(pki, certificates.storeNamesForAddresses(['127.0.0.1:2380', '[::1]:2379']));
        const frontProxy = await certificates.loadOrCreateFrontProxyCertificates(pki);
        await certificates.loadOrIssueClientCertificate(dataDir, cluster.ca, { user: 'kube-apiserver-kubelet-client', groups: ['system:masters'] }, 'apiserver-kubelet-client');
        const forgeLoaded = Object.keys(require.cache).some((file) => /node_modules[\\\\/]node-forge[\\\\/]/.test(file));
        process.stdout.write(JSON.stringify({ created: created.length > 0, outcomes: [cluster.outcome, store.outcome, frontProxy.outcome], forgeLoaded }));
      })();
    `;
    try {
      const first = inFreshProcess(loadAll) as { created: boolean; forgeLoaded: boolean };
      expect(first).to.include({ created: true, forgeLoaded: true });
      expect(inFreshProcess(loadAll)).to.deep.equal({
        created: false,
        outcomes: [{ ca: 'reused', serving: 'reused', admin: 'reused' }, { server: 'reused', peer: 'reused', client: 'reused' }, { ca: 'reused', client: 'reused' }],
        forgeLoaded: false,
      });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
