import { expect } from 'chai';
import { SelectorParseError, customResourceFieldLabelConversion, parseFieldSelector, selectableFields, validateFieldSelector } from '../../../../../src/apis/selectors';

function convert(group: string, version: string, resource: string, selector: string): string {
  return validateFieldSelector(group, version, resource, parseFieldSelector(selector)).toString();
}

function refusal(group: string, version: string, resource: string, selector: string): string {
  try {
    convert(group, version, resource, selector);
  } catch (error) {
    if (error instanceof SelectorParseError) {
      expect(error.code).to.equal(400);
      return error.message;
    }
    throw error;
  }
  throw new Error(`expected ${selector} to be refused for ${resource}`);
}

describe('validateFieldSelector', () => {
  describe('accepts the v1.25 field labels of each served version', () => {
    // The AddFieldLabelConversionFunc lists of k8s.io/kubernetes v1.25 pkg/apis/core/v1,
    // batch/v1, certificates/v1 and events/v1 conversion.go.
    const cases: Array<[group: string, version: string, resource: string, selector: string]> = [
      ['', 'v1', 'pods', 'metadata.name=a,metadata.namespace=b,spec.nodeName=n,spec.restartPolicy=Always'],
      ['', 'v1', 'pods', 'spec.schedulerName=s,spec.serviceAccountName=sa,status.phase=Running'],
      ['', 'v1', 'pods', 'status.podIP=10.0.0.1,status.nominatedNodeName=n'],
      ['', 'v1', 'nodes', 'metadata.name=n,spec.unschedulable=true'],
      ['', 'v1', 'replicationcontrollers', 'metadata.name=a,metadata.namespace=b,status.replicas=1'],
      [
        '',
        'v1',
        'events',
        'involvedObject.kind=Pod,involvedObject.namespace=a,involvedObject.name=b,involvedObject.uid=c,' +
          'involvedObject.apiVersion=v1,involvedObject.resourceVersion=1,involvedObject.fieldPath=f,' +
          'reason=r,reportingComponent=k,source=s,type=Normal,metadata.namespace=n,metadata.name=m',
      ],
      ['', 'v1', 'namespaces', 'metadata.name=a,status.phase=Active'],
      ['', 'v1', 'secrets', 'type=Opaque,metadata.name=a,metadata.namespace=b'],
      ['batch', 'v1', 'jobs', 'metadata.name=a,metadata.namespace=b,status.successful=1'],
      ['certificates.k8s.io', 'v1', 'certificatesigningrequests', 'metadata.name=a,spec.signerName=s'],
      ['', 'v1', 'configmaps', 'metadata.name=a,metadata.namespace=b'],
      ['apps', 'v1', 'deployments', 'metadata.name=a,metadata.namespace=b'],
    ];
    for (const [group, version, resource, selector] of cases) {
      it(`${group || 'core'}/${version} ${resource}: ${selector}`, () => {
        expect(convert(group, version, resource, selector)).to.equal(parseFieldSelector(selector).toString());
      });
    }
  });

  it('renames the legacy pod label spec.host to spec.nodeName', () => {
    // pkg/apis/core/v1/conversion.go: "spec.host" is kept for old v1 clients.
    expect(convert('', 'v1', 'pods', 'spec.host=node-1')).to.equal('spec.nodeName=node-1');
  });

  it('maps events.k8s.io labels onto the core event fields', () => {
    // pkg/apis/events/v1/conversion.go AddFieldLabelConversionsForEvent.
    expect(
      convert(
        'events.k8s.io',
        'v1',
        'events',
        'regarding.kind=Pod,regarding.name=p,regarding.namespace=n,regarding.uid=u,regarding.apiVersion=v1,' +
          'regarding.resourceVersion=7,regarding.fieldPath=f,reportingController=kubelet,reason=r,type=Warning,source=s,' +
          'metadata.name=e,metadata.namespace=n',
      ),
    ).to.equal(
      'metadata.name=e,metadata.namespace=n,reason=r,involvedObject.apiVersion=v1,involvedObject.fieldPath=f,' +
        'involvedObject.kind=Pod,involvedObject.name=p,involvedObject.namespace=n,involvedObject.resourceVersion=7,' +
        'involvedObject.uid=u,reportingComponent=kubelet,source=s,type=Warning',
    );
  });

  describe('refuses unsupported labels with the exact kube-apiserver message', () => {
    const cases: Array<[group: string, version: string, resource: string, selector: string, message: string]> = [
      // Core conversion funcs: fmt.Errorf("field label not supported: %s", label).
      ['', 'v1', 'pods', 'status.hostIP=1.2.3.4', 'field label not supported: status.hostIP'],
      // spec.hostNetwork became selectable only after v1.25 (kubernetes PR 110477).
      ['', 'v1', 'pods', 'spec.hostNetwork=true', 'field label not supported: spec.hostNetwork'],
      ['', 'v1', 'pods', 'status.podIPs=1.2.3.4', 'field label not supported: status.podIPs'],
      ['', 'v1', 'nodes', 'metadata.namespace=', 'field label not supported: metadata.namespace'],
      ['', 'v1', 'namespaces', 'name=default', 'field label not supported: name'],
      ['', 'v1', 'events', 'regarding.kind=Pod', 'field label not supported: regarding.kind'],
      ['events.k8s.io', 'v1', 'events', 'involvedObject.kind=Pod', 'field label not supported: involvedObject.kind'],
      ['certificates.k8s.io', 'v1', 'certificatesigningrequests', 'spec.username=u', 'field label not supported: spec.username'],
      // batch/v1 Job words it differently: fmt.Errorf("field label %q not supported for batchv1.Job", label).
      ['batch', 'v1', 'jobs', 'status.succeeded=1', 'field label "status.succeeded" not supported for batchv1.Job'],
      // Without a registered conversion: runtime.DefaultMetaV1FieldSelectorConversion.
      [
        'apps',
        'v1',
        'replicasets',
        'status.replicas=1',
        '"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"',
      ],
      // Services gained spec.clusterIP/spec.type selectors after v1.25.
      ['', 'v1', 'services', 'spec.type=NodePort', '"spec.type" is not a known field selector: only "metadata.name", "metadata.namespace"'],
      [
        'apps',
        'v1',
        'statefulsets',
        'status.successful=1',
        '"status.successful" is not a known field selector: only "metadata.name", "metadata.namespace"',
      ],
      // The first refused label in the sorted terms is the one reported.
      ['', 'v1', 'pods', 'zzz=1,status.phase=Running,aaa=2', 'field label not supported: aaa'],
      // Labels are not trimmed.
      ['', 'v1', 'pods', ' status.phase=Running', 'field label not supported:  status.phase'],
    ];
    for (const [group, version, resource, selector, message] of cases) {
      it(`${group || 'core'}/${version} ${resource}: ${selector}`, () => {
        expect(refusal(group, version, resource, selector)).to.equal(message);
      });
    }
  });
});

describe('customResourceFieldLabelConversion: the field labels of custom resources (crConverter)', () => {
  const customRefusal = (namespaced: boolean, selector: string): string => {
    try {
      validateFieldSelector('cert.example.com', 'v1', 'certificates', parseFieldSelector(selector), customResourceFieldLabelConversion(namespaced));
    } catch (error) {
      if (error instanceof SelectorParseError) return error.message;
      throw error;
    }
    return 'accepted';
  };

  it('takes metadata.name, and metadata.namespace only when namespaced', () => {
    expect(customRefusal(true, 'metadata.name=web,metadata.namespace=default')).to.equal('accepted');
    expect(customRefusal(false, 'metadata.name=web')).to.equal('accepted');
  });

  it('refuses anything else with "field label not supported", a cluster-scoped resource\'s namespace too', () => {
    expect(customRefusal(true, 'spec.secretName=web-tls')).to.equal('field label not supported: spec.secretName');
    expect(customRefusal(false, 'metadata.namespace=default')).to.equal('field label not supported: metadata.namespace');
    // The built-in table, without the custom conversion, would word it as for a kind it does not know.
    expect(refusal('cert.example.com', 'v1', 'certificates', 'spec.secretName=web-tls')).to.equal('"spec.secretName" is not a known field selector: only "metadata.name", "metadata.namespace"');
  });
});

describe('selectableFields', () => {
  it('reports the pod fields of pkg/registry/core/pod ToSelectableFields', () => {
    const pod = {
      metadata: { name: 'web-1', namespace: 'shop' },
      spec: { nodeName: 'node-a', restartPolicy: 'Always', schedulerName: 'default-scheduler', serviceAccountName: 'default', hostNetwork: true },
      status: { phase: 'Running', podIP: '10.0.0.9', podIPs: [{ ip: '10.0.0.7' }, { ip: 'fd00::7' }], nominatedNodeName: 'node-b' },
    };
    expect(selectableFields('', 'pods', pod)).to.deep.equal({
      'metadata.name': 'web-1',
      'metadata.namespace': 'shop',
      'spec.nodeName': 'node-a',
      'spec.restartPolicy': 'Always',
      'spec.schedulerName': 'default-scheduler',
      'spec.serviceAccountName': 'default',
      'status.phase': 'Running',
      // The registry reads the first of podIPs.
      'status.podIP': '10.0.0.7',
      'status.nominatedNodeName': 'node-b',
    });
  });

  it('falls back to status.podIP and empty strings for a fresh pod', () => {
    // The v1 -> internal conversion fills podIPs from podIP when podIPs is empty.
    const fields = selectableFields('', 'pods', { metadata: { name: 'p', namespace: 'n' }, status: { podIP: '10.1.1.1' } });
    expect(fields['status.podIP']).to.equal('10.1.1.1');
    expect(fields['spec.nodeName']).to.equal('');
    expect(selectableFields('', 'pods', { metadata: { name: 'p', namespace: 'n' } })['status.podIP']).to.equal('');
  });

  it('formats node unschedulable as a Go bool and omits namespace for cluster-scoped objects', () => {
    // pkg/registry/core/node/strategy.go: fmt.Sprint(node.Spec.Unschedulable).
    expect(selectableFields('', 'nodes', { metadata: { name: 'n1' }, spec: { unschedulable: true } })).to.deep.equal({
      'metadata.name': 'n1',
      'spec.unschedulable': 'true',
    });
    expect(selectableFields('', 'nodes', { metadata: { name: 'n2' } })['spec.unschedulable']).to.equal('false');
  });

  it('formats counts in decimal, zero when absent', () => {
    expect(selectableFields('', 'replicationcontrollers', { metadata: { name: 'r', namespace: 'n' }, status: { replicas: 3 } })['status.replicas']).to.equal('3');
    expect(selectableFields('', 'replicationcontrollers', { metadata: { name: 'r', namespace: 'n' } })['status.replicas']).to.equal('0');
    // batch Job: status.successful is status.succeeded.
    expect(selectableFields('batch', 'jobs', { metadata: { name: 'j', namespace: 'n' }, status: { succeeded: 2 } })).to.deep.equal({
      'metadata.name': 'j',
      'metadata.namespace': 'n',
      'status.successful': '2',
    });
    expect(selectableFields('apps', 'replicasets', { metadata: { name: 'rs', namespace: 'n' }, status: { replicas: 5 } })['status.replicas']).to.equal('5');
  });

  it('reports namespace, secret and certificate request fields', () => {
    // pkg/registry/core/namespace: "name" duplicates metadata.name for backward compatibility.
    expect(selectableFields('', 'namespaces', { metadata: { name: 'shop' }, status: { phase: 'Active' } })).to.deep.equal({
      'metadata.name': 'shop',
      'status.phase': 'Active',
      name: 'shop',
    });
    expect(selectableFields('', 'secrets', { metadata: { name: 's', namespace: 'n' }, type: 'kubernetes.io/tls' })).to.deep.equal({
      'metadata.name': 's',
      'metadata.namespace': 'n',
      type: 'kubernetes.io/tls',
    });
    expect(
      selectableFields('certificates.k8s.io', 'certificatesigningrequests', {
        metadata: { name: 'csr-1' },
        spec: { signerName: 'kubernetes.io/kube-apiserver-client' },
      }),
    ).to.deep.equal({ 'metadata.name': 'csr-1', 'spec.signerName': 'kubernetes.io/kube-apiserver-client' });
  });

  it('reports core events, with source falling back to reportingComponent', () => {
    const event = {
      apiVersion: 'v1',
      metadata: { name: 'e', namespace: 'n' },
      involvedObject: { kind: 'Pod', namespace: 'n', name: 'p', uid: 'u', apiVersion: 'v1', resourceVersion: '5', fieldPath: 'spec' },
      reason: 'Started',
      type: 'Normal',
      reportingComponent: 'kubelet',
      source: { component: '' },
    };
    expect(selectableFields('', 'events', event)).to.deep.equal({
      'metadata.name': 'e',
      'metadata.namespace': 'n',
      'involvedObject.kind': 'Pod',
      'involvedObject.namespace': 'n',
      'involvedObject.name': 'p',
      'involvedObject.uid': 'u',
      'involvedObject.apiVersion': 'v1',
      'involvedObject.resourceVersion': '5',
      'involvedObject.fieldPath': 'spec',
      reason: 'Started',
      reportingComponent: 'kubelet',
      source: 'kubelet',
      type: 'Normal',
    });
    expect(selectableFields('', 'events', { ...event, source: { component: 'scheduler' } })['source']).to.equal('scheduler');
  });

  it('reads events.k8s.io events under the core names their converted selectors use', () => {
    const event = {
      apiVersion: 'events.k8s.io/v1',
      metadata: { name: 'e', namespace: 'n' },
      regarding: { kind: 'Deployment', name: 'd', namespace: 'n' },
      reportingController: 'deployment-controller',
      reason: 'ScalingReplicaSet',
      type: 'Normal',
    };
    const fields = selectableFields('events.k8s.io', 'events', event);
    expect(fields['involvedObject.kind']).to.equal('Deployment');
    expect(fields['reportingComponent']).to.equal('deployment-controller');
    expect(fields['source']).to.equal('deployment-controller');
    const selector = validateFieldSelector('events.k8s.io', 'v1', 'events', parseFieldSelector('regarding.kind=Deployment,reportingController=deployment-controller'));
    expect(selector.matches(fields)).to.equal(true);
  });

  it('gives other resources only their metadata fields', () => {
    expect(selectableFields('', 'configmaps', { metadata: { name: 'c', namespace: 'n' }, data: { a: 'b' } })).to.deep.equal({
      'metadata.name': 'c',
      'metadata.namespace': 'n',
    });
    expect(selectableFields('rbac.authorization.k8s.io', 'clusterroles', { metadata: { name: 'admin' } })).to.deep.equal({
      'metadata.name': 'admin',
    });
  });

  it('lets a converted selector filter objects end to end', () => {
    const selector = validateFieldSelector('', 'v1', 'pods', parseFieldSelector('spec.host=node-a,status.phase!=Succeeded'));
    const onNodeA = { metadata: { name: 'a', namespace: 'n' }, spec: { nodeName: 'node-a' }, status: { phase: 'Running' } };
    const elsewhere = { metadata: { name: 'b', namespace: 'n' }, spec: { nodeName: 'node-b' }, status: { phase: 'Running' } };
    expect(selector.matches(selectableFields('', 'pods', onNodeA))).to.equal(true);
    expect(selector.matches(selectableFields('', 'pods', elsewhere))).to.equal(false);
    // metadata.namespace="" matches cluster-scoped objects, which carry no namespace.
    const clusterScoped = validateFieldSelector('rbac.authorization.k8s.io', 'v1', 'clusterroles', parseFieldSelector('metadata.namespace='));
    expect(clusterScoped.matches(selectableFields('rbac.authorization.k8s.io', 'clusterroles', { metadata: { name: 'x' } }))).to.equal(true);
  });
});
