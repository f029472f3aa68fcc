import { expect } from 'chai';
import { defaultImagePullPolicy, imageTag } from '../../../../../src/apis/defaulting/image-pull-policy';
import { compareQuantities, parseQuantity } from '../../../../../src/apis/defaulting/quantity-value';
import { semanticallyEqual } from '../../../../../src/apis/defaulting/semantic-equality';

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
