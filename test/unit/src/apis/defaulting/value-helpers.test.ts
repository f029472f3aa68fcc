import { expect } from 'chai';
import { defaultImagePullPolicy, imageTag } from '../../../../../src/apis/defaulting/image-pull-policy';
import { formatQuantity } from '../../../../../src/apis/defaulting/quantity-format';
import { compareQuantities, parseQuantity } from '../../../../../src/apis/defaulting/quantity-value';
import { semanticallyEqual } from '../../../../../src/apis/defaulting/semantic-equality';
import { defaulted } from './create-as-server';

describe('apis/defaulting: value helpers', () => {
  // Facts: k8s.io/kubernetes v1.25 pkg/util/parsers/parsers.go ParseImageName, which reports "latest"
  // for a reference without tag or digest and fails on references docker/distribution rejects.
  it('reads image tags the way kubelet parsers do', () => {
    expect(imageTag('nginx')).to.equal('latest');
    expect(imageTag('nginx:latest')).to.equal('latest');
    expect(imageTag('nginx:1.25')).to.equal('1.25');
    expect(imageTag('localhost:5000/team/app')).to.equal('latest');
    expect(imageTag('Registry.Example.com/app:v1')).to.equal('v1');
    expect(imageTag(`nginx@sha256:${'a'.repeat(64)}`)).to.equal('');
    expect(imageTag(`nginx:latest@sha256:${'a'.repeat(64)}`)).to.equal('latest');
    expect(imageTag('NGINX')).to.equal('');
    expect(imageTag('')).to.equal('');
  });

  it('chooses Always only for the latest tag', () => {
    expect(defaultImagePullPolicy('busybox')).to.equal('Always');
    expect(defaultImagePullPolicy('busybox:1.36')).to.equal('IfNotPresent');
    expect(defaultImagePullPolicy(`busybox@sha256:${'b'.repeat(64)}`)).to.equal('IfNotPresent');
    expect(defaultImagePullPolicy('Bad Image')).to.equal('IfNotPresent');
    expect(defaultImagePullPolicy(undefined)).to.equal('IfNotPresent');
  });

  it('compares quantities by value across suffixes', () => {
    const value = (text: string) => {
      const parsed = parseQuantity(text);
      if (parsed === undefined) throw new Error(`not a quantity: ${text}`);
      return parsed;
    };
    expect(compareQuantities(value('1'), value('1000m'))).to.equal(0);
    expect(compareQuantities(value('1Gi'), value('1024Mi'))).to.equal(0);
    expect(compareQuantities(value('1G'), value('1Gi'))).to.equal(-1);
    expect(compareQuantities(value('0.5'), value('500m'))).to.equal(0);
    expect(compareQuantities(value('1e3'), value('1k'))).to.equal(0);
    expect(compareQuantities(value('-1'), value('0'))).to.equal(-1);
    expect(parseQuantity('1Gb')).to.equal(undefined);
    expect(parseQuantity('.')).to.equal(undefined);
  });

  it('treats absent, null, zero and empty collections alike, as Semantic.DeepEqual does for Go values', () => {
    expect(semanticallyEqual({ a: [], b: {}, c: '', d: 0, e: false, f: null }, {})).to.equal(true);
    expect(semanticallyEqual({ a: [1] }, { a: [1, 0] })).to.equal(false);
    expect(semanticallyEqual({ a: { b: 1 } }, { a: { b: 2 } })).to.equal(false);
    expect(semanticallyEqual([{}], [])).to.equal(false);
  });
});

describe('apis/defaulting: quantity printing', () => {
  // Facts: k8s.io/apimachinery v1.25 pkg/api/resource/quantity.go (ParseQuantity keeps a canonical
  // spelling, CanonicalizeBytes otherwise) and pkg/apis/core/v1/defaults.go SetDefaults_ResourceList.
  const cases: [unknown, string][] = [
    ['1000m', '1'],
    ['1024Mi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['0.5Ki', '512'],
    [0.5, '500m'],
    [1, '1'],
    ['2000', '2k'],
    ['1500', '1500'],
    ['100M', '100M'],
    ['128974848', '128974848'],
    ['129e6', '129e6'],
    ['1.5e3', '1500'],
    ['0Gi', '0'],
    ['0.1', '100m'],
    ['123Mi', '123Mi'],
  ];
  for (const [sent, printed] of cases) {
    it(`prints ${JSON.stringify(sent)} as ${printed}`, () => {
      expect(formatQuantity(sent, false)).to.equal(printed);
    });
  }

  it('rounds ResourceList values up to milli precision only', () => {
    expect(formatQuantity('1u', true)).to.equal('1m');
    expect(formatQuantity('0.0001', true)).to.equal('1m');
    expect(formatQuantity('1u', false)).to.equal('1u');
    expect(formatQuantity('250m', true)).to.equal('250m');
  });

  it('leaves what is no quantity alone', () => {
    expect(formatQuantity('abc', true)).to.equal(undefined);
    expect(formatQuantity('', true)).to.equal(undefined);
    expect(formatQuantity({}, true)).to.equal(undefined);
  });

  it('prints quantities inside defaulted objects', () => {
    const pod = defaulted({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: {
        containers: [{ name: 'c', image: 'x:1', resources: { limits: { cpu: 2, memory: '2048Mi' } } }],
        volumes: [{ name: 'v', emptyDir: { sizeLimit: '1024Mi' } }],
      },
    });
    const spec = pod.spec as { containers: { resources: unknown }[]; volumes: unknown };
    expect(spec.containers[0].resources).to.deep.equal({ limits: { cpu: '2', memory: '2Gi' }, requests: { cpu: '2', memory: '2Gi' } });
    expect(spec.volumes).to.deep.equal([{ name: 'v', emptyDir: { sizeLimit: '1Gi' } }]);
    const quota = defaulted({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { pods: 10, 'requests.cpu': '4000m' } } });
    expect(quota.spec).to.deep.equal({ hard: { pods: '10', 'requests.cpu': '4' } });
  });
});
