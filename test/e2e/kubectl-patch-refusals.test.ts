/**
 * The refused patch of kubectl's own command tests (kubernetes test/cmd/core.sh, "Patch fails with
 * type restore error and exit code 1"), with kubectl 1.32 against a `carina server`.
 */
import { expect } from 'chai';
import { CarinaApiProcess } from '../support/carina-api-process';

const POD = JSON.stringify({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: 'valid-pod', labels: { name: 'valid-pod' } },
  spec: { containers: [{ name: 'kubernetes-serve-hostname', image: 'registry.k8s.io/serve_hostname' }] },
});

describe('kubectl patch: the type restore error kubectl\'s command tests expect', function () {
  this.timeout(120_000);
  let server: CarinaApiProcess;

  before(async () => {
    server = await CarinaApiProcess.start();
    const created = await server.kubectl(['create', '-f', '-'], { input: POD });
    expect(created.code, created.stderr).to.equal(0);
  });

  after(async () => {
    await server?.stop();
  });

  it('fails with the type restore error and exit code 1 when a strategic merge patch makes labels a string', async () => {
    const result = await server.kubectl(['patch', 'pod', 'valid-pod', '-p', '{"metadata":{"labels":"invalid"}}']);
    expect(result.code).to.equal(1);
    expect(result.stderr).to.contain('cannot restore map from string');
    expect(result.stderr).to.contain('The request is invalid: patch: Invalid value: "map[metadata:map[labels:invalid]]"');
  });
});
