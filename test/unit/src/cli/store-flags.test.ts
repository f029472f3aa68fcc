import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pkiDirectory } from '../../../../src/certificates';
import { FlagError, parseFlags } from '../../../../src/cli/flags';
import { STORE_CLIENT_FLAGS, foundsSharedPki, prepareSharedPki, storeClientTls } from '../../../../src/cli/store-flags';

describe('src/cli store-flags: who founds the shared PKI, and the store client flags', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'carina-store-flags-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lets only the lowest member of a new cluster found the PKI (a second founder would split the cluster)', () => {
    expect(foundsSharedPki(1, [1], 'new')).to.equal(true);
    expect(foundsSharedPki(1, [1, 2, 3], 'new')).to.equal(true);
    expect(foundsSharedPki(2, [1, 2, 3], 'new')).to.equal(false);
    expect(foundsSharedPki(4, [1, 2, 3, 4], 'existing')).to.equal(false);
  });

  it('refuses to start a member that may not found the PKI and was given none, saying what to copy', async () => {
    let failure: unknown;
    try {
      await prepareSharedPki(join(dir, 'm2'), false, () => undefined);
    } catch (err) {
      failure = err;
    }
    expect(failure).to.be.instanceOf(FlagError);
    expect((failure as Error).message).to.contain('etcd/ca.key');
    expect((failure as Error).message).to.contain('carina pki copy');
  });

  it('requires a client certificate for the store commands, and finds one from a member\'s --data-dir', async () => {
    expect(() => storeClientTls(parseFlags([], STORE_CLIENT_FLAGS))).to.throw(FlagError, /--cacert, --cert and --key/);
    const member = join(dir, 'm1');
    await prepareSharedPki(member, true, () => undefined);
    const { loadOrCreateStoreCertificates } = await import('../../../../src/certificates');
    await loadOrCreateStoreCertificates(pkiDirectory(member));
    const tls = storeClientTls(parseFlags(['--data-dir', member], STORE_CLIENT_FLAGS));
    expect(tls.ca).to.contain('BEGIN CERTIFICATE');
    expect(tls.cert).to.contain('BEGIN CERTIFICATE');
    expect(tls.key).to.contain('PRIVATE KEY');
  });
});
