import { expect } from 'chai';
import { chaosHaproxyConfig, haproxyBackendMembers } from '../../../../src/chaos/chaos-load-balancer';
import { haproxyConfig } from '../../../../src/cluster';

const backend = (member: number, slot: number) => ({ member, address: `10.214.9.${10 + slot}`, port: 23100 });

describe('chaos: HAProxy backends follow the membership', () => {
  it('names each server by member id with its namespace address, in the order given', () => {
    const config = chaosHaproxyConfig(25081, [backend(1, 1), backend(2, 2), backend(3, 3)]);
    expect(haproxyBackendMembers(config)).to.deep.equal([1, 2, 3]);
    expect(config).to.contain('  server member-2 10.214.9.12:23100\n');
    expect(config).to.contain('bind 127.0.0.1:25081');
  });

  it('adds a joined member (id from the cluster, address from its slot) and drops a removed one', () => {
    const grown = chaosHaproxyConfig(25081, [backend(1, 1), backend(2, 2), backend(3, 3), backend(1887654321, 4)]);
    expect(haproxyBackendMembers(grown)).to.deep.equal([1, 2, 3, 1887654321]);
    expect(grown).to.contain('  server member-1887654321 10.214.9.14:23100\n');
    const shrunk = chaosHaproxyConfig(25081, [backend(1, 1), backend(3, 3), backend(1887654321, 4)]);
    expect(haproxyBackendMembers(shrunk)).to.deep.equal([1, 3, 1887654321]);
    expect(shrunk).to.not.contain('10.214.9.12');
  });

  it('keeps local-cluster\'s settings: TLS passed through, /readyz health checks, least connections', () => {
    const config = chaosHaproxyConfig(25081, [backend(1, 1)]);
    expect(config.startsWith(haproxyConfig(25081, []))).to.equal(true);
    for (const line of ['mode tcp', 'balance leastconn', 'option httpchk GET /readyz', 'default-server check check-ssl verify none']) expect(config).to.contain(line);
  });
});
