import { expect } from 'chai';
import { CRD_KEY_PREFIX, CustomResourceIndex } from '../../../../src/apiextensions';
import { errors } from '../../../../src/util';
import { fedWatchCache } from '../../../support/watch-cache-feed';

type Obj = Record<string, any>;

/** Argo CD's Application CRD, reduced to its shape: established, and terminating when asked. */
function applicationsCrd(terminating: boolean): Obj {
  const conditions = [{ type: 'NamesAccepted', status: 'True' }, { type: 'Established', status: 'True' }];
  if (terminating) conditions.push({ type: 'Terminating', status: 'True' });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'applications.argo.example.com' },
    spec: {
      group: 'argo.example.com',
      scope: 'Namespaced',
      names: { plural: 'applications', singular: 'application', kind: 'Application', listKind: 'ApplicationList' },
      versions: [{ name: 'v1alpha1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
    status: { conditions },
  };
}

async function indexOf(crd: Obj): Promise<CustomResourceIndex> {
  const { cache } = await fedWatchCache([{ key: `${CRD_KEY_PREFIX}${crd.metadata.name}`, object: crd, modRevision: 5 }]);
  const index = new CustomResourceIndex();
  index.attach(cache);
  return index;
}

describe('apiextensions custom resource index: a CRD that terminates', () => {
  it('refuses create with v1.25\'s 405 and message, keeps update and patch, and drops them from discovery', async () => {
    const index = await indexOf(applicationsCrd(true));
    try {
      const served = index.lookup('argo.example.com', 'v1alpha1', 'applications');
      expect(served?.verbRefusals).to.deep.equal({ create: 'create not allowed while custom resource definition is terminating' });
      expect(served?.verbs).to.include.members(['update', 'patch', 'delete']).and.not.include('create');
      expect(index.apiResourceList('argo.example.com', 'v1alpha1')?.resources[0]?.verbs).to.deep.equal(['delete', 'deletecollection', 'get', 'list', 'watch']);
      const refusal = errors.methodNotSupported({ group: 'argo.example.com', resource: 'applications' }, 'create', served?.verbRefusals?.create);
      expect(refusal.toStatus()).to.deep.equal({
        kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
        message: 'create not allowed while custom resource definition is terminating',
        reason: 'MethodNotAllowed', details: { group: 'argo.example.com', kind: 'applications' }, code: 405,
      });
    } finally {
      index.stop();
    }
  });

  it('serves every verb, and shows them all, while the CRD does not terminate', async () => {
    const index = await indexOf(applicationsCrd(false));
    try {
      expect(index.lookup('argo.example.com', 'v1alpha1', 'applications')?.verbRefusals).to.equal(undefined);
      expect(index.apiResourceList('argo.example.com', 'v1alpha1')?.resources[0]?.verbs).to.deep.equal(['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch']);
    } finally {
      index.stop();
    }
  });

  it('words the 405 of a verb no resource takes as apimachinery\'s NewMethodNotSupported', () => {
    expect(errors.methodNotSupported({ group: 'argo.example.com', resource: 'applications' }, 'connect').message).to.equal('connect is not supported on resources of kind "applications.argo.example.com"');
  });
});
