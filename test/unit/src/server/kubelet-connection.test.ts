/**
 * The kubelet client certificate of the connect subresources: issued once and kept in the data
 * directory, so that a restart neither signs a new one nor waits for a new key (issue 32).
 */
import { expect } from 'chai';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AdmissionChain } from '../../../../src/admission';
import { loadOrCreateClusterCertificates } from '../../../../src/certificates';
import { DEFAULT_KUBELET_CLIENT_OPTIONS, KUBELET_CLIENT_CERTIFICATE_NAME, buildConnect } from '../../../../src/server/kubelet-connection';

describe('server: kubelet connection', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'carina-connect-'));
  });

  afterEach(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('a restart presents the kubelet client certificate of the first start, kept in the data directory', async () => {
    const { ca } = await loadOrCreateClusterCertificates(dataDir);
    const noAdmission = {} as AdmissionChain;
    const first = await buildConnect(DEFAULT_KUBELET_CLIENT_OPTIONS, ca, noAdmission, dataDir);
    const restarted = await buildConnect(DEFAULT_KUBELET_CLIENT_OPTIONS, ca, noAdmission, dataDir);
    expect(restarted.kubelet.transport.cert).to.equal(first.kubelet.transport.cert);
    expect(restarted.kubelet.transport.key).to.equal(first.kubelet.transport.key);
    expect(await fs.readFile(path.join(dataDir, 'pki', `${KUBELET_CLIENT_CERTIFICATE_NAME}.crt`), 'utf8')).to.equal(first.kubelet.transport.cert);
  });
});
