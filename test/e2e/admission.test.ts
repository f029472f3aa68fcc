/**
 * Admission end to end (spec 02 §4.5, §2.1, §5.4; issue 15), with the real kubectl and HTTPS
 * against `carina server` processes: a pod made by `kubectl run` reads back as on
 * kube-apiserver v1.25 (default service account and its projected token volume, priority 0,
 * the two 300 s tolerations), its projected token authenticates as the account; PodSecurity
 * warns and refuses by namespace label; ResourceQuota refuses over quota while status.used
 * follows; NamespaceLifecycle's refusals; the legacy token controller; and a second server
 * started with every admission flag (--enable/--disable-admission-plugins,
 * --admission-control-config-file, the toleration seconds), plus the refusals of bad flags.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CarinaApiProcess } from '../support/carina-api-process';
import { httpsRequest } from '../support/client-credentials';
import { until } from '../support/until';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const TOKEN_MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

describe('admission (e2e: kubectl and HTTPS against carina server)', function () {
  this.timeout(180_000);
  let server: CarinaApiProcess;

  const json = async (args: string[]): Promise<Json> => {
    const result = await server.kubectl([...args, '-o', 'json']);
    expect(result.code, result.stderr).to.equal(0);
    return JSON.parse(result.stdout) as Json;
  };
  const kubectlOk = async (args: string[], on = server) => {
    const result = await on.kubectl(args);
    expect(result.code, `kubectl ${args.join(' ')}: ${result.stderr}`).to.equal(0);
    return result;
  };

  before(async () => {
    server = await CarinaApiProcess.start();
  });

  after(async () => {
    await server?.stop();
  });

  it('gives a pod made by kubectl run the default account, its projected token volume, priority 0 and the default tolerations, as v1.25', async () => {
    await kubectlOk(['create', 'namespace', 'pods-e2e']);
    await kubectlOk(['-n', 'pods-e2e', 'run', 'web', '--image=nginx:1.25']);
    const pod = await json(['-n', 'pods-e2e', 'get', 'pod', 'web']);
    const spec = pod.spec as Json;
    expect(spec).to.deep.include({ serviceAccountName: 'default', serviceAccount: 'default', priority: 0, preemptionPolicy: 'PreemptLowerPriority' });
    expect(spec.tolerations).to.deep.equal([
      { effect: 'NoExecute', key: 'node.kubernetes.io/not-ready', operator: 'Exists', tolerationSeconds: 300 },
      { effect: 'NoExecute', key: 'node.kubernetes.io/unreachable', operator: 'Exists', tolerationSeconds: 300 },
    ]);
    expect(spec.volumes).to.have.length(1);
    const volume = spec.volumes[0] as Json;
    expect(volume.name).to.match(/^kube-api-access-[a-z0-9]{5}$/);
    expect(volume.projected).to.deep.equal({
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { items: [{ key: 'ca.crt', path: 'ca.crt' }], name: 'kube-root-ca.crt' } },
        { downwardAPI: { items: [{ fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' }, path: 'namespace' }] } },
      ],
    });
    expect(spec.containers[0].volumeMounts).to.deep.equal([{ mountPath: TOKEN_MOUNT, name: volume.name, readOnly: true }]);
    // What the volume projects exists: kube-root-ca.crt holds the cluster CA.
    const rootCa = await until('kube-root-ca.crt in pods-e2e', async () => {
      const result = await server.kubectl(['-n', 'pods-e2e', 'get', 'configmap', 'kube-root-ca.crt', '-o', 'json']);
      return result.code === 0 ? (JSON.parse(result.stdout) as Json) : undefined;
    });
    expect(rootCa.data['ca.crt']).to.equal(server.caPem);
  });

  it('issues for the pod the token its volume asks for, which authenticates as system:serviceaccount:NS:default', async () => {
    const pod = await json(['-n', 'pods-e2e', 'get', 'pod', 'web']);
    const tokenRequest = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3607, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: pod.metadata.uid } } };
    const issued = await server.request('POST', '/api/v1/namespaces/pods-e2e/serviceaccounts/default/token', { body: JSON.stringify(tokenRequest) });
    expect(issued.status, issued.text).to.equal(201);
    const token = issued.json<Json>().status.token as string;
    const review = await server.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }) });
    const status = review.json<Json>().status;
    expect(status.authenticated).to.equal(true);
    expect(status.user.username).to.equal('system:serviceaccount:pods-e2e:default');
    expect(status.user.groups).to.include.members(['system:serviceaccounts', 'system:serviceaccounts:pods-e2e']);
    expect(status.user.extra['authentication.kubernetes.io/pod-name']).to.deep.equal(['web']);
    const asAccount = await httpsRequest(server.port, server.caPem, 'GET', '/api/v1/namespaces/pods-e2e/secrets', { credential: { token } });
    expect(asAccount.status).to.equal(403);
    expect(asAccount.json<Json>().message).to.equal('secrets is forbidden: User "system:serviceaccount:pods-e2e:default" cannot list resource "secrets" in API group "" in the namespace "pods-e2e"');
  });

  it('keeps a default account and kube-root-ca.crt in every namespace, the system priority classes, and fills legacy token Secrets', async () => {
    for (const namespace of ['default', 'kube-system', 'kube-public', 'kube-node-lease', 'pods-e2e']) {
      await until(`default account and kube-root-ca.crt in ${namespace}`, async () =>
        (await server.request('GET', `/api/v1/namespaces/${namespace}/serviceaccounts/default`)).status === 200 &&
        (await server.request('GET', `/api/v1/namespaces/${namespace}/configmaps/kube-root-ca.crt`)).status === 200);
    }
    const classes = await json(['get', 'priorityclasses']);
    expect(classes.items.map((c: Json) => [c.metadata.name, c.value])).to.deep.equal([['system-cluster-critical', 2000000000], ['system-node-critical', 2000001000]]);
    const secret = { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token', metadata: { name: 'default-token', annotations: { 'kubernetes.io/service-account.name': 'default' } } };
    expect((await server.request('POST', '/api/v1/namespaces/pods-e2e/secrets', { body: JSON.stringify(secret) })).status).to.equal(201);
    const filled = await until('the legacy token', async () => {
      const got = (await server.request('GET', '/api/v1/namespaces/pods-e2e/secrets/default-token')).json<Json>();
      return got.data?.token !== undefined ? got : undefined;
    });
    expect(Buffer.from(filled.data.namespace, 'base64').toString()).to.equal('pods-e2e');
    expect(Buffer.from(filled.data['ca.crt'], 'base64').toString()).to.equal(server.caPem);
    const token = Buffer.from(filled.data.token, 'base64').toString();
    const review = await server.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }) });
    expect(review.json<Json>().status.user.username).to.equal('system:serviceaccount:pods-e2e:default');
  });

  it('PodSecurity: warns in a warn=restricted namespace, refuses under enforce=restricted, warns only for workloads, and refuses bad labels', async () => {
    await kubectlOk(['create', 'namespace', 'restricted-e2e']);
    await kubectlOk(['label', 'namespace', 'restricted-e2e', 'pod-security.kubernetes.io/warn=restricted']);
    const violations = (name: string) => `allowPrivilegeEscalation != false (container "${name}" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "${name}" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "${name}" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "${name}" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`;
    const warned = await kubectlOk(['-n', 'restricted-e2e', 'run', 'loose', '--image=nginx']);
    expect(warned.stderr).to.contain(`Warning: would violate PodSecurity "restricted:latest": ${violations('loose')}`);
    const tightened = await kubectlOk(['label', 'namespace', 'restricted-e2e', 'pod-security.kubernetes.io/enforce=restricted']);
    expect(tightened.stderr).to.contain('Warning: existing pods in namespace "restricted-e2e" violate the new PodSecurity enforce level "restricted:latest"');
    expect(tightened.stderr).to.contain('Warning: loose: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile');
    const refused = await server.kubectl(['-n', 'restricted-e2e', 'run', 'tight', '--image=nginx']);
    expect(refused.code).to.not.equal(0);
    expect(refused.stderr).to.contain(`Error from server (Forbidden): pods "tight" is forbidden: violates PodSecurity "restricted:latest": ${violations('tight')}`);
    const deployment = await kubectlOk(['-n', 'restricted-e2e', 'create', 'deployment', 'web', '--image=nginx']);
    expect(deployment.stderr).to.contain(`Warning: would violate PodSecurity "restricted:latest": ${violations('nginx')}`);
    const compliant = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'compliant' }, spec: { securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } }, containers: [{ name: 'c', image: 'nginx', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }] } };
    const created = await server.kubectl(['-n', 'restricted-e2e', 'create', '-f', '-'], { input: JSON.stringify(compliant) });
    expect(created.code, created.stderr).to.equal(0);
    expect(created.stderr).to.not.contain('Warning');
    const badLabel = await server.kubectl(['label', 'namespace', 'restricted-e2e', 'pod-security.kubernetes.io/audit=everything']);
    expect(badLabel.stderr).to.contain('The Namespace "restricted-e2e" is invalid: metadata.labels[pod-security.kubernetes.io/audit]: Invalid value: "everything": must be one of privileged, baseline, restricted');
  });

  it('ResourceQuota: refuses a pod over quota with v1.25\'s message, dry runs included, while status.used follows creates and deletes', async () => {
    await kubectlOk(['create', 'namespace', 'quota-e2e']);
    await kubectlOk(['-n', 'quota-e2e', 'create', 'quota', 'pods', '--hard=pods=2,count/configmaps=10']);
    const used = async () => ((await json(['-n', 'quota-e2e', 'get', 'resourcequota', 'pods'])).status?.used ?? {}) as Json;
    // kube-root-ca.crt is one configmap of the namespace.
    await until('the quota\'s first usage', async () => (await used()).pods === '0' && (await used())['count/configmaps'] === '1', 15_000);
    await kubectlOk(['-n', 'quota-e2e', 'run', 'a', '--image=nginx']);
    await kubectlOk(['-n', 'quota-e2e', 'run', 'b', '--image=nginx']);
    const over = await server.kubectl(['-n', 'quota-e2e', 'run', 'c', '--image=nginx']);
    expect(over.stderr).to.contain('Error from server (Forbidden): pods "c" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2');
    const dry = await server.kubectl(['-n', 'quota-e2e', 'run', 'c', '--image=nginx', '--dry-run=server']);
    expect(dry.stderr).to.contain('exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2');
    expect((await used()).pods).to.equal('2');
    await kubectlOk(['-n', 'quota-e2e', 'delete', 'pod', 'a']);
    await until('usage given back', async () => (await used()).pods === '1', 15_000);
    await kubectlOk(['-n', 'quota-e2e', 'run', 'c', '--image=nginx']);
    expect((await used()).pods).to.equal('2');
    // A dry run that fits is not charged.
    await kubectlOk(['-n', 'quota-e2e', 'create', 'configmap', 'dry', '--dry-run=server']);
    expect((await used())['count/configmaps']).to.equal('1');
  });

  it('NamespaceLifecycle: no new objects in missing or terminating namespaces, and default, kube-system, kube-public stay', async () => {
    for (const name of ['default', 'kube-system', 'kube-public']) {
      const refused = await server.kubectl(['delete', 'namespace', name]);
      expect(refused.stderr).to.contain(`Error from server (Forbidden): namespaces "${name}" is forbidden: this namespace may not be deleted`);
    }
    const missing = await server.kubectl(['-n', 'nowhere-e2e', 'create', 'configmap', 'x']);
    expect(missing.stderr).to.contain('failed to create configmap: namespaces "nowhere-e2e" not found');
    await kubectlOk(['create', 'namespace', 'ending-e2e']);
    const held = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', finalizers: ['example.com/hold'] } };
    expect((await server.request('POST', '/api/v1/namespaces/ending-e2e/configmaps', { body: JSON.stringify(held) })).status).to.equal(201);
    await kubectlOk(['delete', 'namespace', 'ending-e2e', '--wait=false']);
    const late = await server.request('POST', '/api/v1/namespaces/ending-e2e/configmaps', { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late' } }) });
    expect(late.status).to.equal(403);
    expect(late.json<Json>()).to.deep.include({
      message: 'configmaps "late" is forbidden: unable to create new content in namespace ending-e2e because it is being terminated',
      details: { name: 'late', kind: 'configmaps', causes: [{ reason: 'NamespaceTerminating', message: 'namespace ending-e2e is being terminated', field: 'metadata.namespace' }] },
    });
    await kubectlOk(['-n', 'ending-e2e', 'patch', 'configmap', 'held', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    await until('the namespace gone', async () => (await server.request('GET', '/api/v1/namespaces/ending-e2e')).status === 404, 20_000);
  });
});

describe('admission flags (e2e: carina server started with kube-apiserver\'s admission flags)', function () {
  this.timeout(180_000);
  let dir: string;
  let server: CarinaApiProcess;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'carina-admission-e2e-'));
    writeFileSync(join(dir, 'event-rate.yaml'), 'apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\nlimits:\n- type: Namespace\n  qps: 0.001\n  burst: 2\n');
    writeFileSync(join(dir, 'admission.yaml'), [
      'apiVersion: apiserver.config.k8s.io/v1',
      'kind: AdmissionConfiguration',
      'plugins:',
      '- name: PodSecurity',
      '  configuration:',
      '    apiVersion: pod-security.admission.config.k8s.io/v1',
      '    kind: PodSecurityConfiguration',
      '    defaults: {enforce: baseline}',
      '    exemptions: {namespaces: [kube-system]}',
      '- name: EventRateLimit',
      '  path: event-rate.yaml',
      '- name: PodNodeSelector',
      '  configuration:',
      '    podNodeSelectorPluginConfig: {clusterDefaultNodeSelector: "env=test"}',
    ].join('\n'));
    server = await CarinaApiProcess.start({
      extraArgs: [
        '--enable-admission-plugins', 'AlwaysPullImages,EventRateLimit,PodNodeSelector,NamespaceAutoProvision',
        '--disable-admission-plugins', 'ServiceAccount,Priority',
        '--admission-control-config-file', join(dir, 'admission.yaml'),
        '--default-not-ready-toleration-seconds', '60',
        '--default-unreachable-toleration-seconds', '120',
      ],
    });
  });

  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs the plugins the flags enable, not those they disable, with the plugins\' own flags', async () => {
    const run = await server.kubectl(['run', 'web', '--image=nginx:1.25', '--image-pull-policy=IfNotPresent']);
    expect(run.code, run.stderr).to.equal(0);
    const pod = JSON.parse((await server.kubectl(['get', 'pod', 'web', '-o', 'json'])).stdout) as Json;
    expect(pod.spec.serviceAccountName).to.equal(undefined);
    expect(pod.spec.volumes).to.equal(undefined);
    expect(pod.spec.priority).to.equal(undefined);
    expect(pod.spec.containers[0].imagePullPolicy).to.equal('Always');
    expect(pod.spec.nodeSelector).to.deep.equal({ env: 'test' });
    expect(pod.spec.tolerations.map((t: Json) => [t.key, t.tolerationSeconds])).to.deep.equal([['node.kubernetes.io/not-ready', 60], ['node.kubernetes.io/unreachable', 120]]);
  });

  it('applies the configuration file: PodSecurity\'s defaults and exemptions, EventRateLimit\'s buckets, NamespaceAutoProvision', async () => {
    const hostNetwork = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'host' }, spec: { hostNetwork: true, containers: [{ name: 'c', image: 'nginx' }] } };
    const refused = await server.request('POST', '/api/v1/namespaces/default/pods', { body: JSON.stringify(hostNetwork) });
    expect(refused.status).to.equal(403);
    expect(refused.json<Json>().message).to.equal('pods "host" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork)');
    expect((await server.request('POST', '/api/v1/namespaces/kube-system/pods', { body: JSON.stringify(hostNetwork) })).status).to.equal(201);
    const event = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'Event', metadata: { name }, involvedObject: { kind: 'Pod', name: 'web', namespace: 'default' }, reason: 'Test', message: 'hello' });
    expect((await server.request('POST', '/api/v1/namespaces/default/events', { body: event('e1') })).status).to.equal(201);
    expect((await server.request('POST', '/api/v1/namespaces/default/events', { body: event('e2') })).status).to.equal(201);
    const limited = await server.request('POST', '/api/v1/namespaces/default/events', { body: event('e3') });
    expect(limited.status).to.equal(429);
    expect(limited.json<Json>().message).to.equal('Too many requests: limit reached on type Namespace for key default');
    const dry = await server.kubectl(['-n', 'auto-made', 'create', 'configmap', 'x', '--dry-run=server']);
    expect(dry.stderr).to.contain('namespaces "auto-made" not found');
    const made = await server.kubectl(['-n', 'auto-made', 'create', 'configmap', 'x']);
    expect(made.code, made.stderr).to.equal(0);
    expect((await server.request('GET', '/api/v1/namespaces/auto-made')).status).to.equal(200);
  });

  it('refuses unknown or overlapping plugin names, and a bad plugin configuration, before serving', async () => {
    for (const [args, message] of [
      [['--enable-admission-plugins', 'Bogus', '--disable-admission-plugins', 'PodSecurityPolicy'], 'carina: [enable-admission-plugins plugin "Bogus" is unknown, disable-admission-plugins plugin "PodSecurityPolicy" is unknown]'],
      [['--enable-admission-plugins', 'AlwaysDeny', '--disable-admission-plugins', 'AlwaysDeny'], 'carina: [AlwaysDeny] in enable-admission-plugins and disable-admission-plugins overlapped'],
      [['--enable-admission-plugins', 'EventRateLimit'], 'couldn\'t init admission plugin "EventRateLimit": limits: Invalid value: []eventratelimit.Limit(nil): must not be empty'],
    ] as const) {
      try {
        const started = await CarinaApiProcess.start({ extraArgs: [...args] });
        await started.stop();
        expect.fail(`carina server started with ${args.join(' ')}`);
      } catch (err) {
        expect((err as Error).message).to.contain(message);
      }
    }
  });
});
