/**
 * bench/api/security-bench.ts: what authentication and authorization cost a request, on one
 * `carina server`, side by side in one run (rounds interleaved, medians reported).
 *
 *   credentials  GET of one ConfigMap at 16 in flight (ops/s, p50, p99) with a client
 *                certificate, a static token, a service-account JWT (TokenRequest) and an
 *                OIDC id-token (a provider on 127.0.0.1), all four users allowed by the same
 *                ClusterRoleBinding to `view`, so only authentication differs; ratio to the
 *                certificate. Goal (issue 13): every token >= 0.9x.
 *   rbac         GET and create at 16 in flight as system:masters (the admin certificate) and as
 *                a user allowed through one RoleBinding among 1,000 Roles and 10,000
 *                RoleBindings; ratio. Goal (issue 14): >= 0.9x.
 *
 * Run: make bench-security (ROUNDS=n, OPS=n).
 */
import * as os from 'node:os';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { issueClientCertificate } from '../../src/certificates';
import { ApiClient, credentialsFromDataDir, type ApiCredentials } from '../support/api-client';
import { CarinaServer } from '../support/carina-server';
import { closedLoop, median, percentile } from '../support/latency';
import { TestOidcProvider } from '../../test/support/oidc-provider';
import { barChart, writeSvgReport } from '../support/svg-plot';

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const OPS = Number(process.env.OPS ?? 3000);
const INFLIGHT = 16;
const ROLES = Number(process.env.ROLES ?? 1000);
const BINDINGS = Number(process.env.BINDINGS ?? 10_000);
/** This benchmark's ports, clear of bench/api's (24300-24302) and bench/cluster's. */
const SERVER_PORTS = { api: 24310, etcd: 24311, raft: 24312 };

interface Figure {
  perSecond: number;
  p50: number;
  p99: number;
}

function figure(result: { perSecond: number; latencies: number[] }): Figure {
  return { perSecond: result.perSecond, p50: percentile(result.latencies, 0.5), p99: percentile(result.latencies, 0.99) };
}

function medianFigure(figures: Figure[]): Figure {
  return { perSecond: median(figures.map((f) => f.perSecond)), p50: median(figures.map((f) => f.p50)), p99: median(figures.map((f) => f.p99)) };
}

async function inParallel(count: number, op: (i: number) => Promise<unknown>): Promise<void> {
  await closedLoop(count, INFLIGHT, (i) => op(i));
}

/** Waits until a burst of GETs runs at a steady rate twice in a row (the replica has caught up with its backlog). */
async function settle(client: ApiClient): Promise<void> {
  let previous = 0;
  for (let attempt = 0; attempt < 30; attempt++) {
    const rate = (await closedLoop(300, INFLIGHT, () => client.request('GET', '/api/v1/namespaces/bench/configmaps/target'))).perSecond;
    if (previous > 0 && Math.abs(rate - previous) / previous < 0.15) return;
    previous = rate;
  }
}

const rbac = (kind: string, metadata: object, rest: object) => JSON.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind, metadata, ...rest });
const roleRef = (kind: string, name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name });

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'carina-security-bench-'));
  const provider = new TestOidcProvider();
  await provider.start();
  writeFileSync(join(dir, 'oidc-ca.pem'), provider.ca.certPem);
  writeFileSync(join(dir, 'tokens.csv'), 'bench-static-token,bench-static,1,bench\n');
  const server = await CarinaServer.start(SERVER_PORTS, [
    '--token-auth-file', join(dir, 'tokens.csv'),
    '--oidc-issuer-url', provider.issuerUrl,
    '--oidc-client-id', 'carina',
    '--oidc-ca-file', join(dir, 'oidc-ca.pem'),
    '--oidc-username-claim', 'email',
    '--auto-compaction-interval', '0',
  ]);
  try {
    const adminCredentials = credentialsFromDataDir(server.dataDir);
    const admin = new ApiClient(server.url, adminCredentials);
    const pki = join(server.dataDir, 'pki');
    const ca = { certPem: readFileSync(join(pki, 'ca.crt'), 'utf8'), keyPem: readFileSync(join(pki, 'ca.key'), 'utf8') };
    for (const ns of ['bench', ...Array.from({ length: 10 }, (_, i) => `rbac-${i}`)]) {
      await admin.request('POST', '/api/v1/namespaces', { body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }) });
    }
    await admin.request('POST', '/api/v1/namespaces/bench/configmaps', { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'target' }, data: { k: 'v' } }) });
    await admin.request('POST', '/api/v1/namespaces/bench/serviceaccounts', { body: JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bench' } }) });
    const tokenRequest = await admin.request('POST', '/api/v1/namespaces/bench/serviceaccounts/bench/token', { body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } }) });
    const saToken = (JSON.parse(tokenRequest.body) as { status: { token: string } }).status.token;
    const oidcToken = await provider.idToken({ email: 'bench-oidc@example.com', email_verified: true });
    const cert = await issueClientCertificate(ca, { user: 'bench-cert', groups: ['bench'] });
    await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      body: rbac('ClusterRoleBinding', { name: 'bench-view' }, {
        roleRef: roleRef('ClusterRole', 'view'),
        subjects: [
          { kind: 'Group', name: 'bench', apiGroup: 'rbac.authorization.k8s.io' },
          { kind: 'User', name: 'bench-oidc@example.com', apiGroup: 'rbac.authorization.k8s.io' },
          { kind: 'ServiceAccount', name: 'bench', namespace: 'bench' },
        ],
      }),
    });
    // 1,000 Roles and 10,000 RoleBindings for other users, and one RoleBinding that lets rbac-user edit in bench.
    await inParallel(ROLES, (i) => admin.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/rbac-${i % 10}/roles`, {
      body: rbac('Role', { name: `role-${i}` }, { rules: [{ apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get', 'list'], resourceNames: [`obj-${i}`] }] }),
    }));
    await inParallel(BINDINGS, (i) => admin.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/rbac-${i % 10}/rolebindings`, {
      body: rbac('RoleBinding', { name: `binding-${i}` }, { roleRef: roleRef('Role', `role-${i % ROLES}`), subjects: [{ kind: 'User', name: `user-${i}`, apiGroup: 'rbac.authorization.k8s.io' }, { kind: 'Group', name: `group-${i % 500}`, apiGroup: 'rbac.authorization.k8s.io' }] }),
    }));
    await admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/bench/rolebindings', { body: rbac('RoleBinding', { name: 'rbac-user-edit' }, { roleRef: roleRef('ClusterRole', 'edit'), subjects: [{ kind: 'User', name: 'rbac-user', apiGroup: 'rbac.authorization.k8s.io' }] }) });
    const rbacCert = await issueClientCertificate(ca, { user: 'rbac-user', groups: [] });
    // Let the replica digest the 11,000 writes (watch cache, RBAC index, aggregation) before measuring.
    await settle(admin);

    const clients: Array<[string, ApiCredentials]> = [
      ['client certificate', { ca: adminCredentials.ca, cert: cert.certPem, key: cert.keyPem }],
      ['static token', { ca: adminCredentials.ca, token: 'bench-static-token' }],
      ['service-account JWT', { ca: adminCredentials.ca, token: saToken }],
      ['OIDC id-token', { ca: adminCredentials.ca, token: oidcToken }],
    ];
    const credentialRounds = new Map<string, Figure[]>(clients.map(([name]) => [name, []]));
    const rbacRounds = new Map<string, Figure[]>();
    const record = (map: Map<string, Figure[]>, name: string, value: Figure) => map.set(name, [...(map.get(name) ?? []), value]);
    for (let round = 0; round < ROUNDS; round++) {
      // The order rotates each round, so that no credential always runs first (or last) on a noisy machine.
      const order = clients.map((_, i) => clients[(i + round) % clients.length]);
      for (const [name, credentials] of order) {
        const client = new ApiClient(server.url, credentials);
        await closedLoop(200, INFLIGHT, () => client.request('GET', '/api/v1/namespaces/bench/configmaps/target'));
        record(credentialRounds, name, figure(await closedLoop(OPS, INFLIGHT, () => client.request('GET', '/api/v1/namespaces/bench/configmaps/target'))));
        client.close();
      }
      // Both identities' GETs first, then both identities' creates, in an order that alternates by
      // round: a GET timed right after 1,500 creates pays for their aftermath (garbage collection,
      // the watch cache's fan-out), which is no cost of authorization.
      const identities: Array<[string, ApiCredentials]> = [['system:masters', adminCredentials], ['RoleBinding user', { ca: adminCredentials.ca, cert: rbacCert.certPem, key: rbacCert.keyPem }]];
      if (round % 2 === 1) identities.reverse();
      for (const [name, credentials] of identities) {
        const client = new ApiClient(server.url, credentials);
        await closedLoop(200, INFLIGHT, () => client.request('GET', '/api/v1/namespaces/bench/configmaps/target'));
        record(rbacRounds, `${name}|get`, figure(await closedLoop(OPS, INFLIGHT, () => client.request('GET', '/api/v1/namespaces/bench/configmaps/target'))));
        client.close();
      }
      for (const [name, credentials] of identities) {
        const client = new ApiClient(server.url, credentials);
        const prefix = `${name === 'system:masters' ? 'm' : 'r'}-${round}`;
        record(rbacRounds, `${name}|create`, figure(await closedLoop(OPS / 2, INFLIGHT, (i) => client.request('POST', '/api/v1/namespaces/bench/configmaps', {
          body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${prefix}-${i}` }, data: { k: 'v' } }),
        }))));
        client.close();
      }
      process.stderr.write(`round ${round + 1}/${ROUNDS} done\n`);
    }
    admin.close();

    const cpu = os.cpus();
    const lines: string[] = [];
    lines.push(`bench/api security: ${new Date().toISOString().slice(0, 10)}, ${cpu.length} x ${cpu[0]?.model ?? 'cpu'}, Node ${process.version}, ${ROUNDS} rounds (medians), ${OPS} GETs per figure, ${INFLIGHT} in flight`);
    lines.push('');
    lines.push('| credential (GET, 16 in flight) | ops/s | p50 ms | p99 ms | ops/s vs certificate |');
    lines.push('|---|---:|---:|---:|---:|');
    const base = medianFigure(credentialRounds.get('client certificate') ?? []).perSecond;
    for (const [name] of clients) {
      const f = medianFigure(credentialRounds.get(name) ?? []);
      lines.push(`| ${name} | ${f.perSecond.toFixed(0)} | ${f.p50.toFixed(2)} | ${f.p99.toFixed(2)} | ${(f.perSecond / base).toFixed(2)}x |`);
    }
    lines.push('');
    lines.push(`| identity (${ROLES} Roles, ${BINDINGS} RoleBindings) | GET ops/s | GET p99 ms | create ops/s | create p99 ms | GET vs masters | create vs masters |`);
    lines.push('|---|---:|---:|---:|---:|---:|---:|');
    const masters = { get: medianFigure(rbacRounds.get('system:masters|get') ?? []), create: medianFigure(rbacRounds.get('system:masters|create') ?? []) };
    for (const name of ['system:masters', 'RoleBinding user']) {
      const get = medianFigure(rbacRounds.get(`${name}|get`) ?? []);
      const create = medianFigure(rbacRounds.get(`${name}|create`) ?? []);
      lines.push(`| ${name} | ${get.perSecond.toFixed(0)} | ${get.p99.toFixed(2)} | ${create.perSecond.toFixed(0)} | ${create.p99.toFixed(2)} | ${(get.perSecond / masters.get.perSecond).toFixed(2)}x | ${(create.perSecond / masters.create.perSecond).toFixed(2)}x |`);
    }
    lines.push('');
    lines.push('Per round, ops/s:');
    for (const [name, rounds] of [...credentialRounds, ...rbacRounds]) lines.push(`- ${name}: ${rounds.map((f) => f.perSecond.toFixed(0)).join(' / ')}`);
    // The two figures of a ratio ran minutes apart at most within a round, so on a machine whose
    // load swings between rounds the median of the per-round ratios is the steadier figure.
    const ratioLine = (label: string, a: Figure[], b: Figure[]) => {
      const ratios = a.map((f, i) => f.perSecond / (b[i]?.perSecond ?? Number.NaN));
      lines.push(`- ${label}: ${ratios.map((r) => r.toFixed(2)).join(' / ')} (median ${median(ratios).toFixed(2)}x)`);
    };
    lines.push('', 'Per-round ratios, ops/s:');
    const certificateRounds = credentialRounds.get('client certificate') ?? [];
    for (const [name, rounds] of credentialRounds) if (name !== 'client certificate') ratioLine(`${name} / client certificate`, rounds, certificateRounds);
    for (const verb of ['get', 'create']) ratioLine(`RoleBinding user / system:masters, ${verb}`, rbacRounds.get(`RoleBinding user|${verb}`) ?? [], rbacRounds.get(`system:masters|${verb}`) ?? []);
    lines.push('',
      `Plot: ${writeSvgReport('security-credentials', barChart({
        title: `bench/api security: GET at ${INFLIGHT} in flight by credential (medians of ${ROUNDS} rounds)`,
        yLabel: 'GETs/s',
        series: ['GETs/s'],
        groups: [...clients.map(([name]) => name)].map((name) => ({ label: name, values: [medianFigure(credentialRounds.get(name) ?? []).perSecond] })),
      }))}`,
      `Plot: ${writeSvgReport('security-rbac', barChart({
        title: `bench/api security: RBAC with ${ROLES} Roles and ${BINDINGS} RoleBindings (medians of ${ROUNDS} rounds)`,
        yLabel: 'operations per second',
        series: ['GET', 'create'],
        groups: ['system:masters', 'RoleBinding user'].map((name) => ({ label: name, values: [medianFigure(rbacRounds.get(`${name}|get`) ?? []).perSecond, medianFigure(rbacRounds.get(`${name}|create`) ?? []).perSecond] })),
      }))}`);
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    await server.stop();
    await provider.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
