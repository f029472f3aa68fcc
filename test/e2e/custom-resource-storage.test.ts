/**
 * The data loss found by trying real operators' CRDs, reproduced with kubectl 1.32: custom resources
 * were keyed by their plural alone, so a Knative-style `certificates.networking.internal.knative.dev`
 * CRD listed, overwrote and on deletion deleted cert-manager's Certificates, and a
 * `services.serving.knative.dev` CRD listed the core `kubernetes` Service as its own and deleted it
 * with itself. Custom resources are now keyed as kube keys them, /registry/<group>/<plural>/.
 */
import { expect } from 'chai';
import { CarinaApiProcess } from '../support/carina-api-process';

function crd(group: string, plural: string, kind: string, version: string): string {
  return JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind },
      versions: [{ name: version, served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  });
}

describe('custom resources of two groups that share a plural, and a plural that is a core resource\'s (kubectl)', function () {
  this.timeout(120_000);
  let server: CarinaApiProcess;

  async function kubectl(args: string[], input?: string): Promise<string> {
    const result = await server.kubectl(args, { input });
    expect(result.code, `kubectl ${args.join(' ')}: ${result.stderr}`).to.equal(0);
    return result.stdout;
  }

  before(async () => {
    server = await CarinaApiProcess.start();
    await kubectl(['apply', '-f', '-'], [
      crd('cert-manager.example.io', 'certificates', 'Certificate', 'v1'),
      crd('networking.internal.example.dev', 'certificates', 'Certificate', 'v1alpha1'),
      crd('serving.example.dev', 'services', 'Service', 'v1'),
    ].join('\n'));
    await kubectl(['wait', '--for', 'condition=Established', '--timeout', '30s', 'crd', '--all']);
  });

  after(async () => {
    await server?.stop();
  });

  it('keeps an object of each group under one name, each read, listed and applied apart', async () => {
    await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'cert-manager.example.io/v1', kind: 'Certificate', metadata: { name: 'shared', namespace: 'default' }, spec: { secretName: 'cert-manager-tls' } }));
    await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'networking.internal.example.dev/v1alpha1', kind: 'Certificate', metadata: { name: 'shared', namespace: 'default' }, spec: { domain: 'example.dev' } }));
    const certManager = JSON.parse(await kubectl(['get', 'certificates.cert-manager.example.io', 'shared', '-o', 'json']));
    const knative = JSON.parse(await kubectl(['get', 'certificates.networking.internal.example.dev', 'shared', '-o', 'json']));
    expect(certManager.spec).to.deep.equal({ secretName: 'cert-manager-tls' });
    expect(knative.spec).to.deep.equal({ domain: 'example.dev' });
    expect(certManager.metadata.uid).to.not.equal(knative.metadata.uid);
    const listed = JSON.parse(await kubectl(['get', 'certificates.cert-manager.example.io', '-A', '-o', 'json']));
    expect(listed.items.map((item: { apiVersion: string }) => item.apiVersion)).to.deep.equal(['cert-manager.example.io/v1']);
  });

  it('a CRD named like a core resource lists only its own objects, and the core list only core ones', async () => {
    await kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'serving.example.dev/v1', kind: 'Service', metadata: { name: 'hello', namespace: 'default' }, spec: { template: {} } }));
    const custom = JSON.parse(await kubectl(['get', 'services.serving.example.dev', '-n', 'default', '-o', 'json']));
    expect(custom.items.map((item: { metadata: { name: string } }) => item.metadata.name)).to.deep.equal(['hello']);
    const core = JSON.parse(await kubectl(['get', 'services', '-n', 'default', '-o', 'json']));
    expect(core.items.map((item: { metadata: { name: string } }) => item.metadata.name)).to.deep.equal(['kubernetes']);
  });

  it('deleting one group\'s CRD deletes its objects only; deleting the services CRD leaves the kubernetes Service', async () => {
    const before = JSON.parse(await kubectl(['get', 'service', 'kubernetes', '-n', 'default', '-o', 'json']));
    await kubectl(['delete', 'crd', 'certificates.networking.internal.example.dev', '--wait=true', '--timeout=60s']);
    await kubectl(['delete', 'crd', 'services.serving.example.dev', '--wait=true', '--timeout=60s']);
    const certManager = JSON.parse(await kubectl(['get', 'certificates.cert-manager.example.io', 'shared', '-o', 'json']));
    expect(certManager.spec).to.deep.equal({ secretName: 'cert-manager-tls' });
    const kubernetes = JSON.parse(await kubectl(['get', 'service', 'kubernetes', '-n', 'default', '-o', 'json']));
    // The same object, never deleted (a re-created one would have another uid).
    expect(kubernetes.metadata.uid).to.equal(before.metadata.uid);
    expect(kubernetes.spec.clusterIP).to.equal('10.0.0.1');
  });
});
