/**
 * Which objects an upgrade moves: the built-ins whose keys changed, and every custom resource,
 * from where earlier builds put them (by plural alone) to kube's keys.
 */
import { expect } from 'chai';
import { keyLayoutMoves, legacyResourceKeyPrefix } from '../../../../src/registry';

describe('keyLayoutMoves', () => {
  it('moves the two built-ins whose keys changed, and every custom resource', () => {
    const moves = keyLayoutMoves([{ group: 'cert-manager.io', resource: 'certificates' }, { group: 'serving.knative.dev', resource: 'services' }]);
    expect(moves).to.have.deep.members([
      { from: '/registry/replicationcontrollers/', to: '/registry/controllers/', group: '' },
      { from: '/registry/endpoints/', to: '/registry/services/endpoints/', group: '' },
      { from: '/registry/certificates/', to: '/registry/cert-manager.io/certificates/', group: 'cert-manager.io' },
      { from: '/registry/services/specs/', to: '/registry/serving.knative.dev/services/', group: 'serving.knative.dev' },
    ]);
  });

  it('knows where earlier builds put a custom resource whose plural was a special prefix', () => {
    expect(legacyResourceKeyPrefix({ group: 'example.com', resource: 'nodes' })).to.equal('/registry/minions/');
    expect(legacyResourceKeyPrefix({ group: 'example.com', resource: 'widgets' })).to.equal('/registry/widgets/');
  });
});
