/**
 * The Service strategy's update rule for clusterIP and clusterIPs (v1.25's normalizeClusterIPs):
 * the plural follows a singular the client changed or cleared, when the client left the plural
 * as it was.
 */
import { expect } from 'chai';
import { normalizeClusterIps } from '../../../../../src/registry/strategies/service';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function service(clusterIP: string | undefined, clusterIPs: string[] | undefined): Obj {
  const spec: Obj = { ports: [{ port: 80 }] };
  if (clusterIP !== undefined) spec.clusterIP = clusterIP;
  if (clusterIPs !== undefined) spec.clusterIPs = clusterIPs;
  return { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec };
}

describe('Service strategy: normalizeClusterIps', () => {
  const cases: Array<[string, Obj, Obj, string | undefined, string[] | undefined]> = [
    ['a changed clusterIP carries unchanged clusterIPs along', service('None', ['None']), service('10.0.0.12', ['None']), '10.0.0.12', ['10.0.0.12']],
    ['a cleared clusterIP clears unchanged clusterIPs', service('10.0.0.5', ['10.0.0.5']), service('', ['10.0.0.5']), '', undefined],
    ['clusterIPs left out with the same clusterIP are kept', service('10.0.0.5', ['10.0.0.5']), service('10.0.0.5', undefined), '10.0.0.5', ['10.0.0.5']],
    ['both changed by the client stay as sent, for validation to judge', service('10.0.0.5', ['10.0.0.5']), service('10.0.0.6', ['10.0.0.7']), '10.0.0.6', ['10.0.0.7']],
    ['nothing changed, nothing moves', service('10.0.0.5', ['10.0.0.5']), service('10.0.0.5', ['10.0.0.5']), '10.0.0.5', ['10.0.0.5']],
  ];
  for (const [title, old, next, clusterIP, clusterIPs] of cases) {
    it(title, () => {
      normalizeClusterIps(next, old);
      expect(next.spec.clusterIP).to.equal(clusterIP);
      expect(next.spec.clusterIPs).to.deep.equal(clusterIPs);
    });
  }
});
