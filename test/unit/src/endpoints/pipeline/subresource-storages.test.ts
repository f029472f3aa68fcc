/**
 * The subresources a resource's storage carries, reached through the whole pipeline in process:
 * pods/binding and pods/eviction (creates that store nothing of their own but act on the pod),
 * and a ReplicationController's scale, whose selector its storage reads as a plain label map.
 */
import { expect } from 'chai';
import { InProcessApi } from '../../../../support/in-process-api';

interface Named {
  metadata: { name: string; resourceVersion: string; deletionTimestamp?: string };
  spec?: { nodeName?: string; replicas?: number };
  status?: { selector?: string; replicas?: number };
}

describe('the request pipeline in process: subresources of a resource\'s storage', function () {
  this.timeout(60_000);
  let api: InProcessApi;
  const namespace = 'subresource-storages';

  before(async () => {
    api = await InProcessApi.start();
    for (const [path, body] of [
      ['/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }],
      [`/api/v1/namespaces/${namespace}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }],
    ] as const) {
      const created = await api.request({ method: 'POST', path, body });
      expect(created.status, created.text).to.equal(201);
    }
  });

  after(async () => {
    await api?.stop();
  });

  const pods = `/api/v1/namespaces/${namespace}/pods`;

  async function createPod(name: string): Promise<void> {
    const created = await api.request({ method: 'POST', path: pods, body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'app', image: 'example.com/app:1' }] } } });
    expect(created.status, created.text).to.equal(201);
  }

  it('pods/binding sets the pod\'s node and answers v1.25\'s 201 Success Status; a second binding is a 409', async () => {
    await createPod('bound');
    const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'bound' }, target: { kind: 'Node', name: 'node-1' } };
    const bound = await api.request({ method: 'POST', path: `${pods}/bound/binding`, body: binding });
    expect(bound.status, bound.text).to.equal(201);
    expect(bound.json()).to.deep.equal({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    const pod = (await api.request({ method: 'GET', path: `${pods}/bound` })).json<Named>();
    expect(pod.spec?.nodeName).to.equal('node-1');
    const again = await api.request({ method: 'POST', path: `${pods}/bound/binding`, body: { ...binding, target: { kind: 'Node', name: 'node-2' } } });
    expect(again.status, again.text).to.equal(409);
    expect(again.json().message).to.equal('Operation cannot be fulfilled on pods/binding "bound": pod bound is already assigned to node "node-1"');
  });

  it('pods/eviction deletes the pod with the Eviction\'s delete options, and a dry run leaves it', async () => {
    await createPod('evicted');
    const eviction = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'evicted' }, deleteOptions: { gracePeriodSeconds: 0 } };
    const dryRun = await api.request({ method: 'POST', path: `${pods}/evicted/eviction?dryRun=All`, body: eviction });
    expect(dryRun.status, dryRun.text).to.equal(201);
    expect((await api.request({ method: 'GET', path: `${pods}/evicted` })).status).to.equal(200);
    const evicted = await api.request({ method: 'POST', path: `${pods}/evicted/eviction`, body: eviction });
    expect(evicted.status, evicted.text).to.equal(201);
    expect(evicted.json()).to.deep.equal({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    expect((await api.request({ method: 'GET', path: `${pods}/evicted` })).status).to.equal(404);
    const mismatch = await api.request({ method: 'POST', path: `${pods}/other/eviction`, body: eviction });
    expect(mismatch.status, mismatch.text).to.equal(400);
    expect(mismatch.json().message).to.equal('name in URL does not match name in Eviction object');
  });

  it('a ReplicationController\'s scale shows its label map as a selector, and a PUT of the Scale sets spec.replicas', async () => {
    const controllers = `/api/v1/namespaces/${namespace}/replicationcontrollers`;
    const template = { metadata: { labels: { app: 'web', tier: 'front' } }, spec: { containers: [{ name: 'app', image: 'example.com/app:1' }] } };
    const created = await api.request({ method: 'POST', path: controllers, body: { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'web' }, spec: { replicas: 2, selector: { app: 'web', tier: 'front' }, template } } });
    expect(created.status, created.text).to.equal(201);
    const scale = await api.request({ method: 'GET', path: `${controllers}/web/scale` });
    expect(scale.status, scale.text).to.equal(200);
    const read = scale.json<Named & { kind: string; apiVersion: string }>();
    expect([read.kind, read.apiVersion, read.spec?.replicas, read.status?.selector]).to.deep.equal(['Scale', 'autoscaling/v1', 2, 'app=web,tier=front']);
    const written = await api.request({ method: 'PUT', path: `${controllers}/web/scale`, body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web' }, spec: { replicas: 3 } } });
    expect(written.status, written.text).to.equal(200);
    expect(written.json<Named>().spec?.replicas).to.equal(3);
    expect((await api.request({ method: 'GET', path: `${controllers}/web` })).json<Named>().spec?.replicas).to.equal(3);
  });
});
