import { expect } from 'chai';
import { validateCreate, validateStatusUpdate, validateUpdate } from '../../../../../src/apis/validation';
import { deployment, edited, messages } from './fixtures';
import type { JsonObject } from '../../../../../src/apis/object';

const spec = (o: JsonObject): JsonObject => o['spec'] as JsonObject;
const template = (o: JsonObject): JsonObject => spec(o)['template'] as JsonObject;

const as = (kind: string, extra: (s: JsonObject) => void = () => undefined): JsonObject =>
  edited(deployment(), (o) => {
    o['kind'] = kind;
    const s = spec(o);
    delete s['strategy'];
    delete s['progressDeadlineSeconds'];
    extra(s);
  });

// Rules of k8s.io/kubernetes pkg/apis/apps/validation/validation.go and the apps registry
// strategies (selector immutable in apps/v1), v1.25.
describe('apis/validation apps/v1', () => {
  it('accepts the fixtures', () => {
    expect(validateCreate(deployment(), true)).to.deep.equal([]);
    expect(validateCreate(as('ReplicaSet'), true)).to.deep.equal([]);
    expect(validateCreate(as('StatefulSet', (s) => Object.assign(s, { serviceName: 'web', podManagementPolicy: 'OrderedReady', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } } })), true)).to.deep.equal([]);
    expect(validateCreate(as('DaemonSet', (s) => {
      delete s['replicas'];
      s['updateStrategy'] = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } };
    }), true)).to.deep.equal([]);
  });

  const deploymentCases: Array<[string, (d: JsonObject) => void, string[]]> = [
    ['requires a selector, which then cannot match', (d) => delete spec(d)['selector'], [
      'spec.selector: Required value',
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
    ]],
    ['requires the selector to match the template labels', (d) => ((template(d)['metadata'] as JsonObject)['labels'] = { app: 'api' }), [
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"api"}: `selector` does not match template `labels`',
    ]],
    ['refuses an empty selector', (d) => (spec(d)['selector'] = {}), [
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment',
    ]],
    ['checks selector expressions', (d) => (spec(d)['selector'] = { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In' }] }), [
      "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
    ]],
    ['refuses negative replicas', (d) => (spec(d)['replicas'] = -1), ['spec.replicas: Invalid value: -1: must be greater than or equal to 0']],
    ['requires restartPolicy Always and no activeDeadlineSeconds', (d) => Object.assign(template(d)['spec'] as JsonObject, { restartPolicy: 'OnFailure', activeDeadlineSeconds: 60 }), [
      'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"',
      'spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported',
    ]],
    ['validates the pod template, with labels on the template path', (d) => {
      (template(d)['metadata'] as JsonObject)['labels'] = { app: 'web', 'bad key!': 'x' };
      ((template(d)['spec'] as JsonObject)['containers'] as JsonObject[])[0]!['image'] = '';
    }, [
      "spec.template.labels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      'spec.template.spec.containers[0].image: Required value',
    ]],
    ['refuses maxUnavailable and maxSurge both zero', (d) => (spec(d)['strategy'] = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } }), [
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: may not be 0 when `maxSurge` is 0',
    ]],
    ['checks percentages', (d) => (spec(d)['strategy'] = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '150%', maxSurge: 'lots' } }), [
      "spec.strategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"lots\"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be greater than 100%',
    ]],
    ['forbids rollingUpdate with Recreate', (d) => (spec(d)['strategy'] = { type: 'Recreate', rollingUpdate: {} }), [
      "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
    ]],
    ['checks the strategy type', (d) => (spec(d)['strategy'] = { type: 'BlueGreen' }), [
      'spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:"BlueGreen", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: "Recreate", "RollingUpdate"',
    ]],
    ['needs progressDeadlineSeconds above minReadySeconds', (d) => Object.assign(spec(d), { minReadySeconds: 700 }), [
      'spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds',
    ]],
  ];
  for (const [name, edit, expected] of deploymentCases) {
    it(`Deployment ${name}`, () => expect(messages(validateCreate(edited(deployment(), edit), true))).to.deep.equal(expected));
  }

  it('keeps a Deployment selector immutable', () => {
    const next = edited(deployment(), (d) => {
      spec(d)['selector'] = { matchLabels: { app: 'web', v: '2' } };
      (template(d)['metadata'] as JsonObject)['labels'] = { app: 'web', v: '2' };
    });
    expect(messages(validateUpdate(next, deployment(), true))).to.deep.equal([
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "v":"2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
    ]);
    expect(messages(validateUpdate(edited(deployment(), (d) => (spec(d)['replicas'] = 5)), deployment(), true))).to.deep.equal([]);
  });

  it('keeps a ReplicaSet selector immutable and says "deployment" for its empty selector, as v1.25 does', () => {
    const rs = as('ReplicaSet');
    const relabelled = edited(rs, (o) => {
      spec(o)['selector'] = { matchLabels: { app: 'web', x: 'y' } };
      (template(o)['metadata'] as JsonObject)['labels'] = { app: 'web', x: 'y' };
    });
    expect(messages(validateUpdate(relabelled, rs, true))).to.deep.equal([
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "x":"y"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
    ]);
    expect(messages(validateCreate(edited(rs, (o) => (spec(o)['selector'] = { matchLabels: {} })), true))[0]).to.equal(
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment',
    );
  });

  describe('StatefulSet', () => {
    const sts = (): JsonObject => as('StatefulSet', (s) => Object.assign(s, { serviceName: 'web', podManagementPolicy: 'OrderedReady', updateStrategy: { type: 'RollingUpdate' } }));
    it('checks policies and skips the pod spec (v1.25 only checks template metadata)', () => {
      const bad = edited(sts(), (o) => {
        Object.assign(spec(o), { podManagementPolicy: 'Random', updateStrategy: { type: 'Sometimes' } });
        ((template(o)['spec'] as JsonObject)['containers'] as JsonObject[])[0]!['image'] = '';
      });
      expect(messages(validateCreate(bad, true))).to.deep.equal([
        "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'",
        "spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:\"Sometimes\", RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be 'RollingUpdate' or 'OnDelete'",
      ]);
    });
    it('forbids updates outside replicas, template, updateStrategy, minReadySeconds and the PVC policy', () => {
      expect(messages(validateUpdate(edited(sts(), (o) => (spec(o)['replicas'] = 4)), sts(), true))).to.deep.equal([]);
      expect(messages(validateUpdate(edited(sts(), (o) => (spec(o)['serviceName'] = 'other')), sts(), true))).to.deep.equal([
        "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ]);
    });
  });

  describe('DaemonSet', () => {
    const ds = (): JsonObject => as('DaemonSet', (s) => {
      delete s['replicas'];
      s['updateStrategy'] = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } };
    });
    it('needs exactly one of maxUnavailable and maxSurge', () => {
      const both = edited(ds(), (o) => (spec(o)['updateStrategy'] = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } }));
      expect(messages(validateCreate(both, true))).to.deep.equal([
        'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: may not be set when maxUnavailable is non-zero',
      ]);
      const neither = edited(ds(), (o) => (spec(o)['updateStrategy'] = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } }));
      expect(messages(validateCreate(neither, true))).to.deep.equal(['spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0']);
    });
    it('requires restartPolicy Always and a matching selector', () => {
      const bad = edited(ds(), (o) => {
        (template(o)['spec'] as JsonObject)['restartPolicy'] = 'Never';
        (template(o)['metadata'] as JsonObject)['labels'] = { app: 'x' };
      });
      expect(messages(validateCreate(bad, true))).to.deep.equal([
        'spec.template.metadata.labels: Invalid value: map[string]string{"app":"x"}: `selector` does not match template `labels`',
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
      ]);
    });
  });

  it('checks status counts on status updates, ignoring the spec', () => {
    const next = edited(deployment(), (d) => {
      spec(d)['replicas'] = -5;
      d['status'] = { replicas: 2, readyReplicas: 3, availableReplicas: 1, updatedReplicas: -1 };
    });
    expect(messages(validateStatusUpdate(next, deployment(), true))).to.deep.equal([
      'status.updatedReplicas: Invalid value: -1: must be greater than or equal to 0',
      'status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas',
    ]);
  });

  it('never lets collisionCount go down', () => {
    const old = edited(deployment(), (d) => (d['status'] = { replicas: 1, collisionCount: 2 }));
    const next = edited(deployment(), (d) => (d['status'] = { replicas: 1, collisionCount: 1 }));
    expect(messages(validateStatusUpdate(next, old, true))).to.deep.equal(['status.collisionCount: Invalid value: 1: cannot be decremented']);
    const ds = as('DaemonSet', (s) => delete s['replicas']);
    const dsOld = edited(ds, (d) => (d['status'] = { numberReady: 1, collisionCount: 3 }));
    const dsNext = edited(ds, (d) => (d['status'] = { numberReady: -1 }));
    expect(messages(validateStatusUpdate(dsNext, dsOld, true))).to.deep.equal([
      'status.numberReady: Invalid value: -1: must be greater than or equal to 0',
      'status.collisionCount: Invalid value: 0: cannot be decremented',
    ]);
  });
});
