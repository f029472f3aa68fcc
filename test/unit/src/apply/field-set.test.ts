import { expect } from 'chai';
import {
  FieldSet, FieldSetDecodeError, fieldElement, indexElement, keyElement, parsePathElement, pathToString, serializePathElement, valueElement,
} from '../../../../src/apply';

// The managedFields entry kube-apiserver v1.25 writes for `kubectl create deployment nginx --image=nginx`
// (manager kubectl-create, operation Update): byte-for-byte the fieldsV1 JSON of such an object.
const KUBECTL_CREATE_DEPLOYMENT = '{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:progressDeadlineSeconds":{},"f:replicas":{},'
  + '"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{"f:rollingUpdate":{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},'
  + '"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:image":{},'
  + '"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},'
  + '"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}}}';

// A Service as `kubectl expose` leaves it: ports keyed by port+protocol (k8s.io/api core/v1 ServiceSpec
// listMapKeys), plus a set list (v:) and an atomic list (i:) element for the element-kind coverage.
const SERVICE_LIKE = '{"f:spec":{"f:ports":{".":{},"k:{\\"port\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:port":{},"f:protocol":{},"f:targetPort":{}}},'
  + '"f:selector":{}},"f:status":{"f:conditions":{"i:0":{}}},"f:metadata":{"f:finalizers":{".":{},"v:\\"a\\"":{},"v:\\"b\\"":{}}}}';

describe('apply/field-set', () => {
  describe('FieldsV1 round trip', () => {
    it('decodes and re-encodes the fieldsV1 of a kubectl-created Deployment byte-identically', () => {
      const set = FieldSet.fromJson(KUBECTL_CREATE_DEPLOYMENT);
      expect(set.toJson()).to.equal(KUBECTL_CREATE_DEPLOYMENT);
      expect(JSON.stringify(set.toFieldsV1())).to.equal(KUBECTL_CREATE_DEPLOYMENT);
    });

    it('re-sorts keys into structured-merge-diff order and puts "." first (fieldpath/serialize.go)', () => {
      const set = FieldSet.fromJson(SERVICE_LIKE);
      // f:metadata sorts before f:spec and f:status; field names are compared bytewise.
      expect(set.toJson()).to.equal('{"f:metadata":{"f:finalizers":{".":{},"v:\\"a\\"":{},"v:\\"b\\"":{}}},'
        + '"f:spec":{"f:ports":{".":{},"k:{\\"port\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:port":{},"f:protocol":{},"f:targetPort":{}}},"f:selector":{}},'
        + '"f:status":{"f:conditions":{"i:0":{}}}}');
    });

    it('orders field names before keys, keys before values, values before indexes (PathElement.Compare)', () => {
      const set = FieldSet.of([
        [indexElement(0)], [valueElement('x')], [keyElement([{ name: 'name', value: 'a' }])], [fieldElement('z')],
      ]);
      expect(Object.keys(set.toFieldsV1())).to.deep.equal(['f:z', 'k:{"name":"a"}', 'v:"x"', 'i:0']);
    });

    it('orders values numbers < strings < booleans and numbers numerically (value.Compare)', () => {
      const set = FieldSet.of([[valueElement(true)], [valueElement('b')], [valueElement(10)], [valueElement(9)]]);
      expect(Object.keys(set.toFieldsV1())).to.deep.equal(['v:9', 'v:10', 'v:"b"', 'v:true']);
    });

    it('orders keys by their sorted field names, then values (value.FieldList.Compare)', () => {
      const set = FieldSet.of([
        [keyElement([{ name: 'protocol', value: 'UDP' }, { name: 'containerPort', value: 53 }])],
        [keyElement([{ name: 'containerPort', value: 53 }, { name: 'protocol', value: 'TCP' }])],
      ]);
      expect(Object.keys(set.toFieldsV1())).to.deep.equal(['k:{"containerPort":53,"protocol":"TCP"}', 'k:{"containerPort":53,"protocol":"UDP"}']);
    });

    it('drops elements of unknown types and empty children, as readIterV1 does', () => {
      expect(FieldSet.fromJson('{"x:what":{},"f:a":{}}').toJson()).to.equal('{"f:a":{}}');
    });

    it('rejects malformed keys', () => {
      expect(() => FieldSet.fromJson('{"fa":{}}')).to.throw(FieldSetDecodeError, 'missing colon: fa');
      expect(() => FieldSet.fromJson('{"k:{nope":{}}')).to.throw(FieldSetDecodeError);
      expect(() => FieldSet.fromJson('{"f:a":1}')).to.throw(FieldSetDecodeError);
    });
  });

  describe('path elements', () => {
    it('serialises keys with sorted fields and Go (HTML-safe) string escaping', () => {
      const element = keyElement([{ name: 'protocol', value: 'TCP' }, { name: 'containerPort', value: 80 }]);
      expect(serializePathElement(element)).to.equal('k:{"containerPort":80,"protocol":"TCP"}');
      // encoding/json escapes <, > and & (jsoniter ConfigCompatibleWithStandardLibrary likewise).
      expect(serializePathElement(valueElement('<a&b>'))).to.equal('v:"\\u003ca\\u0026b\\u003e"');
    });

    it('parses what it serialises', () => {
      for (const text of ['f:metadata', 'k:{"name":"nginx"}', 'v:"x"', 'v:3', 'i:2']) {
        expect(serializePathElement(parsePathElement(text) as never)).to.equal(text);
      }
      expect(parsePathElement('z:1')).to.equal(undefined);
    });

    it('prints paths as Kubernetes conflict messages do (Path.String)', () => {
      const path = [fieldElement('spec'), fieldElement('containers'), keyElement([{ name: 'name', value: 'nginx' }]), fieldElement('image')];
      expect(pathToString(path)).to.equal('.spec.containers[name="nginx"].image');
      expect(pathToString([fieldElement('ports'), keyElement([{ name: 'protocol', value: 'TCP' }, { name: 'port', value: 80 }])]))
        .to.equal('.ports[port=80,protocol="TCP"]');
      expect(pathToString([fieldElement('finalizers'), valueElement('a')])).to.equal('.finalizers[="a"]');
      expect(pathToString([fieldElement('args'), indexElement(1)])).to.equal('.args[1]');
    });
  });

  describe('set algebra', () => {
    const a = FieldSet.fromJson('{"f:data":{"f:x":{},"f:y":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}');
    const b = FieldSet.fromJson('{"f:data":{"f:y":{},"f:z":{}}}');

    it('unions, intersects and subtracts member by member', () => {
      expect(a.union(b).toJson()).to.equal('{"f:data":{"f:x":{},"f:y":{},"f:z":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}');
      expect(a.intersection(b).toJson()).to.equal('{"f:data":{"f:y":{}}}');
      expect(a.difference(b).toJson()).to.equal('{"f:data":{"f:x":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}');
    });

    it('keeps the children of a removed member in a plain difference but not in a recursive one', () => {
      const labels = FieldSet.of([[fieldElement('metadata'), fieldElement('labels')]]);
      expect(a.difference(labels).toJson()).to.equal('{"f:data":{"f:x":{},"f:y":{}},"f:metadata":{"f:labels":{"f:app":{}}}}');
      expect(a.recursiveDifference(labels).toJson()).to.equal('{"f:data":{"f:x":{},"f:y":{}}}');
    });

    it('lists member paths, members before children (Set.Iterate)', () => {
      expect(a.paths().map(pathToString)).to.deep.equal(['.data.x', '.data.y', '.metadata.labels', '.metadata.labels.app']);
      expect(a.has([fieldElement('metadata'), fieldElement('labels')])).to.equal(true);
      expect(a.has([fieldElement('metadata')])).to.equal(false);
      expect(a.hasPrefix([fieldElement('metadata')])).to.equal(true);
    });

    it('does not track the empty path (the whole object)', () => {
      const set = FieldSet.empty();
      set.insert([]);
      expect(set.isEmpty()).to.equal(true);
    });
  });
});
