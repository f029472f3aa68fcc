/**
 * kubectl 1.32 against a `carina server` where kubectl's output is what shows the registry's
 * v1.25 semantics: `patched (no change)` and an unchanged resourceVersion for writes that change
 * nothing, an empty `kubectl diff`, `kubectl replace` of a Node with resourceVersion "0", the
 * Service clusterIP change `kubectl apply` is refused, and `kubectl get componentstatuses`.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CarinaApiProcess } from '../support/carina-api-process';
import { until } from '../support/until';

describe('kubectl and the registry\'s v1.25 update semantics (carina server)', function () {
  this.timeout(120_000);
  let server: CarinaApiProcess;
  let dir: string;

  const kubectl = async (...args: string[]): Promise<string> => {
    const result = await server.kubectl(args);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}):\n${result.stderr}\n${result.stdout}`);
    return result.stdout;
  };
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const resourceVersion = (kindAndName: string): Promise<string> => kubectl('get', kindAndName, '-o', 'jsonpath={.metadata.resourceVersion}');

  before(async () => {
    server = await CarinaApiProcess.start();
    dir = mkdtempSync(join(tmpdir(), 'carina-e2e-registry-'));
  });

  after(async () => {
    await server?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('kubectl patch that changes nothing prints "patched (no change)", even right after create', async () => {
    await kubectl('create', 'configmap', 'same', '--from-literal=a=1');
    const before = await resourceVersion('configmap/same');
    expect(await kubectl('patch', 'configmap', 'same', '-p', '{"data":{"a":"1"}}')).to.equal('configmap/same patched (no change)\n');
    expect(await kubectl('patch', 'configmap', 'same', '--type=json', '-p', '[{"op":"replace","path":"/data/a","value":"1"}]')).to.equal('configmap/same patched (no change)\n');
    expect(await resourceVersion('configmap/same')).to.equal(before);
  });

  it('kubectl replace of the object as read, and an unchanged apply --server-side, keep the resourceVersion', async () => {
    await kubectl('create', 'configmap', 'replaced', '--from-literal=a=1');
    const before = await resourceVersion('configmap/replaced');
    const read = file('replaced.json', await kubectl('get', 'configmap', 'replaced', '-o', 'json'));
    expect(await kubectl('replace', '-f', read)).to.equal('configmap/replaced replaced\n');
    expect(await resourceVersion('configmap/replaced')).to.equal(before);
    const config = file('applied.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: "1"\n');
    await kubectl('apply', '--server-side', '-f', config);
    const applied = await resourceVersion('configmap/applied');
    expect(await kubectl('apply', '--server-side', '-f', config)).to.equal('configmap/applied serverside-applied\n');
    expect(await resourceVersion('configmap/applied')).to.equal(applied);
  });

  it('kubectl diff of what was applied shows nothing, client-side and server-side', async () => {
    const deployment = file('deployment.yaml', [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata:',
      '  name: diffed',
      'spec:',
      '  replicas: 2',
      '  selector:',
      '    matchLabels: {app: diffed}',
      '  template:',
      '    metadata:',
      '      labels: {app: diffed}',
      '    spec:',
      '      containers:',
      '      - name: web',
      '        image: nginx:1.25',
      '',
    ].join('\n'));
    await kubectl('apply', '-f', deployment);
    const clientSide = await server.kubectl(['diff', '-f', deployment]);
    expect(clientSide.code, clientSide.stdout + clientSide.stderr).to.equal(0);
    expect(clientSide.stdout).to.equal('');
    const config = file('diffed-cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: diffed\ndata:\n  a: "1"\n');
    await kubectl('apply', '--server-side', '-f', config);
    const serverSide = await server.kubectl(['diff', '--server-side', '-f', config]);
    expect(serverSide.code, serverSide.stdout + serverSide.stderr).to.equal(0);
    expect(serverSide.stdout).to.equal('');
    // A real change still shows, against the live resourceVersion kept on both sides.
    const changed = await server.kubectl(['diff', '-f', file('diffed-changed.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: diffed\ndata:\n  a: "2"\n'), '--server-side']);
    expect(changed.code).to.equal(1);
    expect(changed.stdout).to.contain('-  a: "1"\n+  a: "2"');
    expect(changed.stdout).not.to.contain('resourceVersion');
  });

  it('kubectl replace of a Node whose manifest says resourceVersion "0" replaces it unconditionally', async () => {
    await kubectl('create', '-f', file('node.yaml', 'apiVersion: v1\nkind: Node\nmetadata:\n  name: node-rv0\n  labels: {zone: a}\n'));
    const node = file('node-rv0.yaml', 'apiVersion: v1\nkind: Node\nmetadata:\n  name: node-rv0\n  resourceVersion: "0"\n  labels: {zone: b}\nspec:\n  unschedulable: true\n');
    expect(await kubectl('replace', '-f', node)).to.equal('node/node-rv0 replaced\n');
    expect(await kubectl('get', 'node', 'node-rv0', '-o', 'jsonpath={.metadata.labels.zone} {.spec.unschedulable}')).to.equal('b true');
  });

  it('kubectl apply changing a headless Service to clusterIP 10.0.0.12 is refused as v1.25 refuses it', async () => {
    const headless = 'apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-none\nspec:\n  clusterIP: None\n  selector: {app: x}\n  ports:\n  - port: 80\n';
    await kubectl('apply', '-f', file('svc-none.yaml', headless));
    const refused = await server.kubectl(['apply', '-f', file('svc-ip.yaml', headless.replace('clusterIP: None', 'clusterIP: 10.0.0.12'))]);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.contain('The Service "svc-none" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.0.0.12"}: may not change once set');
    expect(await kubectl('get', 'service', 'svc-none', '-o', 'jsonpath={.spec.clusterIPs}')).to.equal('["None"]');
  });

  it('kubectl get componentstatuses prints STATUS, MESSAGE and ERROR', async () => {
    const out = await until('the controller-manager to be healthy', async () => {
      const result = await server.kubectl(['get', 'componentstatuses']);
      return /^controller-manager\s+Healthy\s+ok\s*$/m.test(result.stdout) ? result : undefined;
    }, 30_000);
    const lines = out.stdout.trimEnd().split('\n');
    expect(lines[0]).to.match(/^NAME\s+STATUS\s+MESSAGE\s+ERROR$/);
    expect(lines.slice(1).map((line) => line.split(/\s{2,}/)[0])).to.deep.equal(['scheduler', 'controller-manager', 'etcd-0']);
    expect(lines).to.satisfy((all: string[]) => all.some((line) => /^etcd-0\s+Healthy\s+\{"health":"true","reason":""\}\s*$/.test(line)));
    expect(lines).to.satisfy((all: string[]) => all.some((line) => /^scheduler\s+Unhealthy\s+Get "https:\/\/127\.0\.0\.1:10259\/healthz": dial tcp 127\.0\.0\.1:10259: connect: connection refused$/.test(line)));
    expect(out.stderr).to.contain('Warning: v1 ComponentStatus is deprecated in v1.19+');
  });
});
