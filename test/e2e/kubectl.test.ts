/**
 * kubectl 1.32 against a running `carina server`, the way a new user drives it: discovery,
 * explain, the create/get/apply/replace/edit/label/annotate/delete cycle for the common kinds,
 * output formats, watch and chunked lists. Set CARINA_E2E_ETCD=1 (the etcd variant below does)
 * to run the same suite with the objects stored in a real etcd 3.4.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CarinaApiProcess } from '../support/carina-api-process';
import { EtcdCluster } from '../support/etcd-process';
import { until } from '../support/until';

type Obj = Record<string, any>;

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - containerPort: 80
`;

const SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - port: 80
`;

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: solo
spec:
  containers:
  - name: main
    image: busybox
    command: ["sleep", "3600"]
`;

export function kubectlSuite(title: string, startServer: () => Promise<{ server: CarinaApiProcess; cleanup: () => Promise<void> }>): void {
  describe(title, function () {
    this.timeout(120_000);
    let server: CarinaApiProcess;
    let cleanup: () => Promise<void>;
    let dir: string;

    const kubectl = async (...args: string[]) => {
      const result = await server.kubectl(args);
      if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}):\n${result.stderr}\n${result.stdout}`);
      return result.stdout;
    };
    const file = (name: string, text: string) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    };

    before(async () => {
      ({ server, cleanup } = await startServer());
      dir = mkdtempSync(join(tmpdir(), 'carina-e2e-'));
    });

    after(async () => {
      await cleanup?.();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('kubectl get ns shows the system namespaces', async () => {
      const out = await kubectl('get', 'ns', '-o', 'name');
      expect(out.split('\n').filter((l) => l !== '').sort()).to.deep.equal(['namespace/default', 'namespace/kube-node-lease', 'namespace/kube-public', 'namespace/kube-system']);
    });

    it('kubectl api-resources lists the v1.25 resources with short names', async () => {
      const out = await kubectl('api-resources', '--no-headers');
      const rows = out.split('\n').filter((l) => l !== '');
      expect(rows.length).to.be.greaterThan(50);
      expect(out).to.match(/^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m);
      expect(out).to.match(/^namespaces\s+ns\s+v1\s+false\s+Namespace$/m);
    });

    it('kubectl explain reads the served OpenAPI', async () => {
      const out = await kubectl('explain', 'deployment.spec.strategy');
      expect(out).to.contain('KIND:       Deployment');
      expect(out).to.contain('rollingUpdate');
    });

    it('kubectl explain also reads OpenAPI v2 in Protobuf (what client-go\'s OpenAPISchema asks for)', async () => {
      const out = await kubectl('explain', 'pods.spec.containers.ports', '--output=plaintext-openapiv2');
      expect(out).to.contain('KIND:     Pod');
      expect(out).to.contain('containerPort');
    });

    it('create -f, get -o yaml shows v1.25 defaults, delete', async () => {
      await kubectl('create', '-f', file('deploy.yaml', DEPLOYMENT));
      const deployment = JSON.parse(await kubectl('get', 'deployment', 'web', '-o', 'json')) as Obj;
      expect(deployment.spec.strategy).to.deep.equal({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
      expect(deployment.spec.revisionHistoryLimit).to.equal(10);
      expect(deployment.spec.progressDeadlineSeconds).to.equal(600);
      expect(deployment.metadata.generation).to.equal(1);
      const container = deployment.spec.template.spec.containers[0];
      expect(container).to.include({ imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' });
      expect(deployment.spec.template.spec).to.include({ restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', terminationGracePeriodSeconds: 30, schedulerName: 'default-scheduler' });
      const yaml = await kubectl('get', 'deploy', 'web', '-o', 'yaml');
      expect(yaml).to.contain('progressDeadlineSeconds: 600');
      await kubectl('create', '-f', file('pod.yaml', POD));
      const pod = JSON.parse(await kubectl('get', 'pod', 'solo', '-o', 'json')) as Obj;
      expect(pod.status).to.include({ phase: 'Pending', qosClass: 'BestEffort' });
      expect(pod.spec.containers[0].imagePullPolicy).to.equal('Always');
      await kubectl('delete', 'pod', 'solo');
      const gone = await server.kubectl(['get', 'pod', 'solo']);
      expect(gone.code).to.not.equal(0);
      expect(gone.stderr).to.contain('pods "solo" not found');
    });

    it('services get a cluster IP from the range, node ports without duplicates', async () => {
      await kubectl('create', '-f', file('svc.yaml', SERVICE));
      const svc = JSON.parse(await kubectl('get', 'svc', 'web', '-o', 'json')) as Obj;
      expect(svc.spec.clusterIP).to.match(/^10\.0\.0\.\d+$/);
      expect(svc.spec.clusterIP).to.not.equal('10.0.0.1');
      expect(svc.spec.ports[0]).to.include({ port: 80, targetPort: 80, protocol: 'TCP' });
      const kubernetes = JSON.parse(await kubectl('get', 'svc', 'kubernetes', '-o', 'json')) as Obj;
      expect(kubernetes.spec.clusterIP).to.equal('10.0.0.1');
      const endpoints = JSON.parse(await kubectl('get', 'endpoints', 'kubernetes', '-o', 'json')) as Obj;
      // Endpoints may not hold loopback addresses: a loopback-bound replica advertises the host's address.
      expect(endpoints.subsets[0].addresses[0].ip).to.match(/^\d+\.\d+\.\d+\.\d+$/);
      expect(endpoints.subsets[0].addresses[0].ip).to.not.match(/^127\./);
      expect(endpoints.subsets[0].ports[0].port).to.equal(server.port);
      const ports = new Set<number>();
      for (let i = 0; i < 5; i++) {
        await kubectl('create', 'service', 'nodeport', `np${i}`, '--tcp=80:80');
        const np = JSON.parse(await kubectl('get', 'svc', `np${i}`, '-o', 'json')) as Obj;
        const port = np.spec.ports[0].nodePort as number;
        expect(port).to.be.within(30000, 32767);
        ports.add(port);
      }
      expect(ports.size).to.equal(5);
      const taken = [...ports][0];
      const clash = await server.kubectl(['create', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'clash' }, spec: { type: 'NodePort', ports: [{ port: 81, nodePort: taken }] } }) });
      expect(clash.code).to.not.equal(0);
      expect(clash.stderr).to.contain('provided port is already allocated');
    });

    it('kubectl create configmap|secret|namespace|deployment (Protobuf bodies)', async () => {
      await kubectl('create', 'configmap', 'literal', '--from-literal=a=1', '--from-literal=b=2');
      const cm = JSON.parse(await kubectl('get', 'cm', 'literal', '-o', 'json')) as Obj;
      expect(cm.data).to.deep.equal({ a: '1', b: '2' });
      await kubectl('create', 'secret', 'generic', 'token', '--from-literal=t=s3cret');
      const secret = JSON.parse(await kubectl('get', 'secret', 'token', '-o', 'json')) as Obj;
      expect(secret.type).to.equal('Opaque');
      expect(Buffer.from(secret.data.t, 'base64').toString()).to.equal('s3cret');
      await kubectl('create', 'namespace', 'made-by-kubectl');
      expect(await kubectl('get', 'ns', 'made-by-kubectl', '-o', 'jsonpath={.status.phase}')).to.equal('Active');
      await kubectl('create', 'deployment', 'gen', '--image=nginx', '-n', 'made-by-kubectl');
      expect(await kubectl('get', 'deploy', 'gen', '-n', 'made-by-kubectl', '-o', 'jsonpath={.spec.replicas}')).to.equal('1');
    });

    it('label, annotate, apply, replace and edit change the object', async () => {
      await kubectl('label', 'cm', 'literal', 'tier=backend');
      await kubectl('annotate', 'cm', 'literal', 'note=hello');
      const cm = JSON.parse(await kubectl('get', 'cm', 'literal', '-o', 'json')) as Obj;
      expect(cm.metadata.labels).to.deep.equal({ tier: 'backend' });
      expect(cm.metadata.annotations).to.deep.equal({ note: 'hello' });
      expect(await kubectl('get', 'cm', '-l', 'tier=backend', '-o', 'name')).to.equal('configmap/literal\n');
      const applied = file('applied.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  x: "1"\n');
      expect(await kubectl('apply', '-f', applied)).to.contain('configmap/applied created');
      writeFileSync(applied, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  x: "2"\n  w: "3"\n');
      expect(await kubectl('apply', '-f', applied)).to.contain('configmap/applied configured');
      expect(await kubectl('get', 'cm', 'applied', '-o', 'jsonpath={.data}')).to.equal('{"w":"3","x":"2"}');
      const replaced = file('replaced.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  z: "9"\n');
      await kubectl('replace', '-f', replaced);
      expect(await kubectl('get', 'cm', 'applied', '-o', 'jsonpath={.data}')).to.equal('{"z":"9"}');
      await kubectl('apply', '-f', file('deploy2.yaml', DEPLOYMENT.replace('nginx:1.25', 'nginx:1.26')));
      const deployment = JSON.parse(await kubectl('get', 'deploy', 'web', '-o', 'json')) as Obj;
      expect(deployment.spec.template.spec.containers[0].image).to.equal('nginx:1.26');
      expect(deployment.metadata.generation).to.equal(2);
      // kubectl scale patches the scale subresource; only spec.replicas changes.
      await kubectl('scale', 'deploy', 'web', '--replicas=4');
      expect(await kubectl('get', 'deploy', 'web', '-o', 'jsonpath={.spec.replicas}')).to.equal('4');
      const scale = JSON.parse(await kubectl('get', '--raw', '/apis/apps/v1/namespaces/default/deployments/web/scale')) as Obj;
      expect(scale).to.deep.include({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 4 }, status: { replicas: 0, selector: 'app=web' } });
      const editor = file('editor.sh', '#!/bin/sh\nsed -i "s/z: \\"9\\"/z: \\"10\\"/" "$1"\n');
      const edited = await server.kubectl(['edit', 'cm', 'applied'], { env: { KUBE_EDITOR: `sh ${editor}` } });
      expect(edited.code, edited.stderr).to.equal(0);
      expect(await kubectl('get', 'cm', 'applied', '-o', 'jsonpath={.data.z}')).to.equal('10');
    });

    it('get -o wide, --chunk-size and get -w', async () => {
      for (let i = 0; i < 12; i++) await kubectl('create', 'configmap', `chunk-${String(i).padStart(2, '0')}`, '-n', 'made-by-kubectl');
      const chunked = await kubectl('get', 'cm', '-n', 'made-by-kubectl', '--chunk-size=5', '-o', 'name');
      expect(chunked.split('\n').filter((l) => l.startsWith('configmap/chunk-')).length).to.equal(12);
      const wide = await kubectl('get', 'deploy', '-o', 'wide');
      // Server-side Table columns, as kube-apiserver v1.25 prints them.
      expect(wide).to.match(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/m);
      expect(wide).to.match(/^web\s+0\/4\s+0\s+0\s+\S+\s+nginx\s+nginx:1.26\s+app=web$/m);
      const services = await kubectl('get', 'svc', 'kubernetes');
      expect(services).to.match(/^kubernetes\s+ClusterIP\s+10\.0\.0\.1\s+<none>\s+443\/TCP\s+\S+$/m);
      // get -w prints the list, then watches from the list's resourceVersion: a change made once
      // the list is printed is one the watch must show.
      const watcher = server.kubectlRunning(['get', 'cm', '-w', '-n', 'made-by-kubectl', '-o', 'name']);
      await until('kubectl get -w to print the list', () => watcher.stdout().includes('configmap/chunk-11\n'), 30_000, watcher.stderr);
      await kubectl('create', 'configmap', 'watched-one', '-n', 'made-by-kubectl');
      await until('kubectl get -w to print the new configmap', () => watcher.stdout().split('\n').includes('configmap/watched-one'), 30_000, watcher.stdout);
      const watched = await watcher.stop();
      expect(watched.stdout.split('\n')).to.include('configmap/watched-one');
      // A watch as Table: kubectl prints the server's columns once, then one row per event.
      const tableWatcher = server.kubectlRunning(['get', 'cm', '-w', '-n', 'made-by-kubectl', '--output-watch-events']);
      await until('kubectl get -w to print the list as Table rows', () => /^ADDED\s+watched-one\s/m.test(tableWatcher.stdout()), 30_000, tableWatcher.stderr);
      await kubectl('delete', 'configmap', 'watched-one', '-n', 'made-by-kubectl');
      await until('kubectl get -w to print the deletion', () => /^DELETED\s/m.test(tableWatcher.stdout()), 30_000, tableWatcher.stdout);
      const tableWatch = (await tableWatcher.stop()).stdout;
      expect(tableWatch).to.match(/^EVENT\s+NAME\s+DATA\s+AGE$/m);
      expect(tableWatch).to.match(/^DELETED\s+watched-one\s+0\s+\S+$/m);
    });

    it('deleting a namespace empties it first; propagation policies drive the garbage collector', async () => {
      await kubectl('create', 'namespace', 'gc');
      const owner = JSON.parse(await kubectl('create', 'configmap', 'owner', '-n', 'gc', '-o', 'json')) as Obj;
      const dependent = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'gc', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid, blockOwnerDeletion: true }] } });
      await server.kubectl(['create', '-f', '-'], { input: dependent('dep-a') });
      await kubectl('delete', 'cm', 'owner', '-n', 'gc', '--cascade=orphan');
      await until('orphaning owner gone', async () => (await server.kubectl(['get', 'cm', 'owner', '-n', 'gc'])).code !== 0, 30_000);
      const orphan = JSON.parse(await kubectl('get', 'cm', 'dep-a', '-n', 'gc', '-o', 'json')) as Obj;
      expect(orphan.metadata.ownerReferences).to.equal(undefined);
      const owner2 = JSON.parse(await kubectl('create', 'configmap', 'owner2', '-n', 'gc', '-o', 'json')) as Obj;
      for (const name of ['dep-b', 'dep-c']) {
        await server.kubectl(['create', '-f', '-'], { input: dependent(name).replace(owner.metadata.uid, owner2.metadata.uid).replace('"owner"', '"owner2"') });
      }
      await kubectl('delete', 'cm', 'owner2', '-n', 'gc', '--cascade=foreground', '--wait=true');
      await until('foreground dependents gone', async () => (await server.kubectl(['get', 'cm', 'dep-b', 'dep-c', '-n', 'gc'])).stdout.trim() === '', 30_000);
      const owner3 = JSON.parse(await kubectl('create', 'configmap', 'owner3', '-n', 'gc', '-o', 'json')) as Obj;
      await server.kubectl(['create', '-f', '-'], { input: dependent('dep-d').replace(owner.metadata.uid, owner3.metadata.uid).replace('"owner"', '"owner3"') });
      await kubectl('delete', 'cm', 'owner3', '-n', 'gc');
      await until('background dependent gone', async () => (await server.kubectl(['get', 'cm', 'dep-d', '-n', 'gc'])).code !== 0, 30_000);
      await kubectl('delete', 'namespace', 'gc', '--wait=true', '--timeout=60s');
      expect((await server.kubectl(['get', 'cm', 'dep-a', '-n', 'gc'])).code).to.not.equal(0);
    });

    it('kubectl --validate=strict|warn|false: unknown fields refused, warned about, or dropped', async () => {
      const path = file('unknown.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: validated\ncolour: blue\ndata:\n  a: "1"\n');
      const strict = await server.kubectl(['create', '-f', path]);
      expect(strict.code).to.not.equal(0);
      expect(strict.stderr).to.contain('strict decoding error: unknown field "colour"');
      const warned = await server.kubectl(['create', '-f', path, '--validate=warn']);
      expect(warned.code, warned.stderr).to.equal(0);
      expect(warned.stderr).to.contain('Warning: unknown field "colour"');
      await kubectl('delete', 'cm', 'validated');
      await kubectl('create', '-f', path, '--validate=false');
      expect(await kubectl('get', 'cm', 'validated', '-o', 'jsonpath={.data.a}')).to.equal('1');
      expect(JSON.parse(await kubectl('get', 'cm', 'validated', '-o', 'json')).colour).to.equal(undefined);
    });

    it('kubectl apply --server-side: creates, reports conflicts, --force-conflicts takes over, client-side apply upgrades', async () => {
      const manifest = (replicas: number) => `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ssa\nspec:\n  replicas: ${replicas}\n  selector:\n    matchLabels: {app: ssa}\n  template:\n    metadata:\n      labels: {app: ssa}\n    spec:\n      containers:\n      - name: c\n        image: nginx:1\n`;
      expect(await kubectl('apply', '--server-side', '-f', file('ssa.yaml', manifest(2)))).to.contain('deployment.apps/ssa serverside-applied');
      const owned = JSON.parse(await kubectl('get', 'deploy', 'ssa', '-o', 'json', '--show-managed-fields')) as Obj;
      expect(owned.metadata.managedFields.map((m: Obj) => `${m.manager}/${m.operation}`)).to.deep.equal(['kubectl/Apply']);
      const other = await server.kubectl(['apply', '--server-side', '--field-manager=other', '-f', file('ssa-other.yaml', manifest(4))]);
      expect(other.code).to.not.equal(0);
      expect(other.stderr).to.contain('conflict with "kubectl"');
      expect(other.stderr).to.contain('.spec.replicas');
      await kubectl('apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', file('ssa-other.yaml', manifest(4)));
      expect(await kubectl('get', 'deploy', 'ssa', '-o', 'jsonpath={.spec.replicas}')).to.equal('4');
      // An object made with client-side apply moves to server-side apply without conflicts (§4.9.8).
      const csa = file('csa.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: csa-to-ssa\ndata:\n  k: "1"\n');
      await kubectl('apply', '-f', csa);
      writeFileSync(csa, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: csa-to-ssa\ndata:\n  k: "2"\n');
      expect(await kubectl('apply', '--server-side', '-f', csa)).to.contain('serverside-applied');
      expect(await kubectl('get', 'cm', 'csa-to-ssa', '-o', 'jsonpath={.data.k}')).to.equal('2');
    });

    it('walks the field-ownership table of spec §3.2 row by row with kubectl, and the §4.9.7 handover', async () => {
      const applyAs = (manager: string, data: Record<string, string>, force = false) => {
        const body = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: rows\ndata:\n${Object.entries(data).map(([k, v]) => `  ${k}: "${v}"\n`).join('')}`;
        return server.kubectl(['apply', '--server-side', `--field-manager=${manager}`, ...(force ? ['--force-conflicts'] : []), '-f', file(`rows-${manager}.yaml`, body)]);
      };
      const live = async () => JSON.parse(await kubectl('get', 'cm', 'rows', '-o', 'json', '--show-managed-fields')) as Obj;
      const owners = (object: Obj) => Object.fromEntries((object.metadata.managedFields as Obj[]).map((m) => [`${m.manager}/${m.operation}`, Object.keys(m.fieldsV1?.['f:data'] ?? {}).map((k) => k.slice(2)).sort()]));
      expect((await applyAs('alice', { x: '1', v: '1' })).code).to.equal(0);
      // Row 1: another applier's different value without force is a conflict, and nothing changes.
      const row1 = await applyAs('bob', { x: '2' });
      expect(row1.code).to.not.equal(0);
      expect(row1.stderr).to.contain('conflict with "alice": .data.x');
      expect((await live()).data).to.deep.equal({ x: '1', v: '1' });
      // Row 3: the same value makes the field shared.
      expect((await applyAs('bob', { x: '1' })).code).to.equal(0);
      expect(owners(await live())).to.deep.equal({ 'alice/Apply': ['v', 'x'], 'bob/Apply': ['x'] });
      // Row 4: a shared field changed by one of its owners, without force, conflicts with the other.
      const row4 = await applyAs('alice', { x: '3', v: '1' });
      expect(row4.code).to.not.equal(0);
      expect(row4.stderr).to.contain('conflict with "bob": .data.x');
      // Row 2: force gives the field to the applier alone and takes it from every other entry.
      expect((await applyAs('bob', { x: '4' }, true)).code).to.equal(0);
      expect((await live()).data.x).to.equal('4');
      expect(owners(await live())).to.deep.equal({ 'alice/Apply': ['v'], 'bob/Apply': ['x'] });
      // Row 6: dropping a field others own too leaves it to them, value kept.
      expect((await applyAs('bob', { x: '4', v: '1' })).code).to.equal(0);
      expect((await applyAs('alice', { z: '1' })).code).to.equal(0);
      expect((await live()).data).to.deep.equal({ x: '4', v: '1', z: '1' });
      expect(owners(await live())).to.deep.equal({ 'alice/Apply': ['z'], 'bob/Apply': ['v', 'x'] });
      // Row 5: dropping a field nobody else owns deletes it.
      expect((await applyAs('alice', { w: '1' })).code).to.equal(0);
      expect((await live()).data).to.deep.equal({ w: '1', x: '4', v: '1' });
      // Row 7: a non-apply write takes the field without conflict, recorded as Update.
      await kubectl('patch', 'cm', 'rows', '--type=merge', '-p', '{"data":{"x":"5"}}', '--field-manager=carol');
      expect((await live()).data.x).to.equal('5');
      expect(owners(await live())).to.deep.equal({ 'alice/Apply': ['w'], 'bob/Apply': ['v'], 'carol/Update': ['x'] });

      // Row 5 with a default: replicas dropped by its only applier goes back to the default of 1.
      const deployment = (replicas: string) => `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: handover\nspec:\n${replicas}  selector:\n    matchLabels: {app: handover}\n  template:\n    metadata:\n      labels: {app: handover}\n    spec:\n      containers:\n      - name: c\n        image: nginx:1\n`;
      await kubectl('apply', '--server-side', '-f', file('handover.yaml', deployment('  replicas: 3\n')));
      await kubectl('apply', '--server-side', '-f', file('handover.yaml', deployment('')));
      expect(await kubectl('get', 'deploy', 'handover', '-o', 'jsonpath={.spec.replicas}')).to.equal('1');
      // §4.9.7: hand replicas to a controller through a dedicated manager, then drop it from the main config.
      await kubectl('apply', '--server-side', '-f', file('handover.yaml', deployment('  replicas: 3\n')));
      await kubectl('apply', '--server-side', '--field-manager=handover-to-hpa', '-f', file('handover-field.yaml', 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: handover\nspec:\n  replicas: 3\n'));
      await kubectl('apply', '--server-side', '-f', file('handover.yaml', deployment('')));
      expect(await kubectl('get', 'deploy', 'handover', '-o', 'jsonpath={.spec.replicas}')).to.equal('3');
      await kubectl('scale', 'deploy', 'handover', '--replicas=5');
      const handedOver = JSON.parse(await kubectl('get', 'deploy', 'handover', '-o', 'json', '--show-managed-fields')) as Obj;
      expect(handedOver.spec.replicas).to.equal(5);
      // The temporary manager owned nothing more, so its entry is gone.
      expect(handedOver.metadata.managedFields.map((m: Obj) => m.manager)).not.to.include('handover-to-hpa');
    });

    it('kubectl patch: strategic merge directives, merge patch and JSON patch', async () => {
      const deployment = JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'patched', labels: { a: '1', b: '2' } }, spec: { selector: { matchLabels: { app: 'patched' } }, template: { metadata: { labels: { app: 'patched' } }, spec: { containers: [
        { name: 'one', image: 'busybox', env: [{ name: 'X', value: '1' }, { name: 'Y', value: '2' }] },
        { name: 'two', image: 'busybox' },
      ] } } } });
      await server.kubectl(['create', '-f', '-'], { input: deployment });
      const get = async () => JSON.parse(await kubectl('get', 'deploy', 'patched', '-o', 'json')) as Obj;
      const containers = (o: Obj) => o.spec.template.spec.containers as Obj[];
      // Merge by key: one container's image changes, the other stays; an env var is added by name.
      await kubectl('patch', 'deploy', 'patched', '--type=strategic', '-p', JSON.stringify({ spec: { template: { spec: { containers: [{ name: 'one', image: 'busybox:1.36', env: [{ name: 'Z', value: '3' }] }] } } } }));
      let now = await get();
      expect(containers(now).map((c) => `${c.name}=${c.image}`)).to.deep.equal(['one=busybox:1.36', 'two=busybox']);
      expect(containers(now)[0].env.map((e: Obj) => e.name)).to.deep.equal(['Z', 'X', 'Y']);
      // $patch: delete removes one list item by key; null removes a map key.
      await kubectl('patch', 'deploy', 'patched', '--type=strategic', '-p', JSON.stringify({ metadata: { labels: { a: null } }, spec: { template: { spec: { containers: [{ name: 'one', env: [{ name: 'X', $patch: 'delete' }] }] } } } }));
      now = await get();
      expect(now.metadata.labels).to.deep.equal({ b: '2' });
      expect(containers(now)[0].env.map((e: Obj) => e.name)).to.deep.equal(['Z', 'Y']);
      // $setElementOrder reorders; $deleteFromPrimitiveList removes from a primitive merge list (finalizers).
      await kubectl('patch', 'deploy', 'patched', '--type=strategic', '-p', JSON.stringify({ spec: { template: { spec: { containers: [{ name: 'one', '$setElementOrder/env': [{ name: 'Y' }, { name: 'Z' }] }] } } } }));
      expect(containers(await get())[0].env.map((e: Obj) => e.name)).to.deep.equal(['Y', 'Z']);
      await kubectl('patch', 'deploy', 'patched', '--type=merge', '-p', JSON.stringify({ metadata: { finalizers: ['example.com/a', 'example.com/b'] } }));
      await kubectl('patch', 'deploy', 'patched', '--type=strategic', '-p', JSON.stringify({ metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/a'] } }));
      expect((await get()).metadata.finalizers).to.deep.equal(['example.com/b']);
      // $retainKeys: switching to Recreate drops rollingUpdate.
      await kubectl('patch', 'deploy', 'patched', '--type=strategic', '-p', JSON.stringify({ spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } }));
      expect((await get()).spec.strategy).to.deep.equal({ type: 'Recreate' });
      // JSON patch, and a failing test operation as 422 that changes nothing.
      await kubectl('patch', 'deploy', 'patched', '--type=json', '-p', JSON.stringify([{ op: 'add', path: '/metadata/labels/c', value: '3' }, { op: 'remove', path: '/metadata/finalizers' }]));
      expect((await get()).metadata.labels).to.deep.equal({ b: '2', c: '3' });
      const failed = await server.kubectl(['patch', 'deploy', 'patched', '--type=json', '-p', JSON.stringify([{ op: 'test', path: '/metadata/labels/c', value: 'no' }, { op: 'remove', path: '/metadata/labels/b' }])]);
      expect(failed.code).to.not.equal(0);
      expect(failed.stderr).to.contain('the server rejected our request due to an error in our request');
      expect((await get()).metadata.labels).to.deep.equal({ b: '2', c: '3' });
      await kubectl('delete', 'deploy', 'patched');
    });

    it('bad input gets the right error and changes nothing', async () => {
      const invalidName = await server.kubectl(['create', 'configmap', 'Bad_Name']);
      expect(invalidName.code).to.not.equal(0);
      expect(invalidName.stderr).to.contain('is invalid');
      const unknown = await server.kubectl(['get', 'widgets']);
      expect(unknown.code).to.not.equal(0);
      expect(unknown.stderr).to.contain(`the server doesn't have a resource type "widgets"`);
      expect((await server.kubectl(['get', 'cm', 'Bad_Name'])).code).to.not.equal(0);
    });
  });
}

kubectlSuite('kubectl against carina server (embedded store)', async () => {
  const server = await CarinaApiProcess.start();
  return { server, cleanup: () => server.stop() };
});

kubectlSuite('kubectl against carina server --etcd-servers (etcd 3.4)', async () => {
  const etcd = await EtcdCluster.start(1);
  const server = await CarinaApiProcess.start({ etcdServers: etcd.members[0].clientUrl, etcdTls: etcd.tls });
  return {
    server,
    cleanup: async () => {
      await server.stop();
      await etcd.stop();
    },
  };
});
