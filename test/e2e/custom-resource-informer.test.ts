/**
 * Issue 17: an informer from @kubernetes/client-node (0.22.3) on a custom resource keeps its
 * cache right across a restart of the replica it talks to: it lists and watches, loses the
 * watch when the replica stops, and (restarted by its error handler, as client code does) lists
 * and watches again, seeing what changed while it was away and after.
 */
import * as k8s from '@kubernetes/client-node';
import { expect } from 'chai';
import { stringify } from 'yaml';
import { CarinaApiProcess } from '../support/carina-api-process';
import { until } from '../support/until';

const GROUP = 'informer.example.com';

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `gauges.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'gauges', singular: 'gauge', kind: 'Gauge' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { level: { type: 'integer' } } } } } } }],
  },
};

describe('custom resources: a client-node informer across a replica restart', function () {
  this.timeout(120_000);
  let server: CarinaApiProcess;
  let informer: (k8s.Informer<k8s.KubernetesObject> & k8s.ObjectCache<k8s.KubernetesObject>) | undefined;
  let stopping = false;

  const create = async (name: string, level: number) => {
    const result = await server.kubectl(['create', '-f', '-'], { input: stringify({ apiVersion: `${GROUP}/v1`, kind: 'Gauge', metadata: { name }, spec: { level } }) });
    if (result.code !== 0) throw new Error(result.stderr);
  };

  before(async () => {
    server = await CarinaApiProcess.start();
    const applied = await server.kubectl(['apply', '-f', '-'], { input: stringify(CRD) });
    if (applied.code !== 0) throw new Error(applied.stderr);
    await server.kubectl(['wait', '--for', 'condition=established', '--timeout=30s', `crd/gauges.${GROUP}`]);
  });

  after(async () => {
    stopping = true;
    await informer?.stop();
    await server?.stop();
  });

  it('lists, watches, and after the restart sees both old and new objects', async () => {
    await create('before', 1);
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(server.kubeconfig);
    const api = kc.makeApiClient(k8s.CustomObjectsApi);
    const listFn = () => api.listNamespacedCustomObject(GROUP, 'v1', 'default', 'gauges') as unknown as Promise<{ response: import('node:http').IncomingMessage; body: k8s.KubernetesListObject<k8s.KubernetesObject> }>;
    informer = k8s.makeInformer(kc, `/apis/${GROUP}/v1/namespaces/default/gauges`, listFn);
    const added: string[] = [];
    let errors = 0;
    informer.on('add', (object) => added.push(String(object.metadata?.name)));
    informer.on('error', () => {
      errors++;
      // client-node leaves restarting to its user, as its examples do.
      if (!stopping) setTimeout(() => void informer?.start().catch(() => undefined), 500);
    });
    await informer.start();
    await until('the informer lists the first object', async () => added.includes('before'));
    await create('watched', 2);
    await until('the informer watches a new object', async () => added.includes('watched'));

    await server.stop({ keepData: true });
    await server.launch();
    await until('the informer notices the restart', async () => errors > 0, 30_000);
    await create('after', 3);
    await until('the informer sees an object created after the restart', async () => informer?.get('after', 'default') !== undefined, 30_000);
    const names = (informer.list('default') ?? []).map((o) => String(o.metadata?.name)).sort();
    expect(names).to.deep.equal(['after', 'before', 'watched']);
    expect((informer.get('after', 'default') as unknown as { spec: { level: number } }).spec.level).to.equal(3);
  });
});
