import { expect } from 'chai';
import {
  FieldSet, ManagedFieldsDecodeError, decodeManagedFields, encodeManagedFields, isManagedFieldsReset, managerKey, type ManagedFieldSets,
} from '../../../../src/apply';

const entry = (manager: string, operation: string, time: string, fieldsV1: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  manager, operation, apiVersion: 'v1', time, fieldsType: 'FieldsV1', fieldsV1, ...extra,
});

// Facts from k8s.io/apiserver pkg/endpoints/handlers/fieldmanager/internal/managedfields.go (v1.25).
describe('apply/managed-fields', () => {
  it('identifies appliers without apiVersion and updaters with it (BuildManagerIdentifier)', () => {
    expect(managerKey({ manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', subresource: '' })).to.equal('{"manager":"kubectl","operation":"Apply"}');
    expect(managerKey({ manager: 'kubelet', operation: 'Update', apiVersion: 'v1', subresource: 'status' }))
      .to.equal('{"manager":"kubelet","operation":"Update","apiVersion":"v1","subresource":"status"}');
  });

  it('decodes entries into field sets keyed by identity', () => {
    const decoded = decodeManagedFields([
      entry('kubectl', 'Apply', '2022-01-01T00:00:00Z', { 'f:data': { 'f:a': {} } }),
      entry('kubectl-edit', 'Update', '2022-01-02T00:00:00Z', { 'f:data': { 'f:b': {} } }),
    ]);
    expect([...decoded.keys()]).to.deep.equal(['{"manager":"kubectl","operation":"Apply"}', '{"manager":"kubectl-edit","operation":"Update","apiVersion":"v1"}']);
    expect(decoded.get('{"manager":"kubectl","operation":"Apply"}')?.fields.toJson()).to.equal('{"f:data":{"f:a":{}}}');
  });

  it('refuses entries Kubernetes refuses, with its messages', () => {
    expect(() => decodeManagedFields([entry('m', 'Patch', 't', {})])).to.throw(ManagedFieldsDecodeError, 'operation must be `Apply` or `Update`');
    expect(() => decodeManagedFields([{ ...entry('m', 'Update', 't', {}), apiVersion: '' }])).to.throw(ManagedFieldsDecodeError, 'apiVersion must not be empty');
    expect(() => decodeManagedFields([{ ...entry('m', 'Update', 't', {}), fieldsType: undefined }])).to.throw(ManagedFieldsDecodeError, 'missing fieldsType in managed fields entry 0');
    expect(() => decodeManagedFields([{ ...entry('m', 'Update', 't', {}), fieldsType: 'FieldsV2' }])).to.throw(ManagedFieldsDecodeError, 'invalid fieldsType "FieldsV2" in managed fields entry 0');
  });

  it('encodes Apply entries first, then by time, manager, apiVersion and subresource (sortEncodedManagedFields)', () => {
    const set = FieldSet.fromJson('{"f:data":{}}');
    const managers: ManagedFieldSets = new Map();
    const add = (manager: string, operation: 'Apply' | 'Update', time: string | undefined, subresource = ''): void => {
      const identity = { manager, operation, apiVersion: 'v1', subresource };
      managers.set(managerKey(identity), { ...identity, time, fields: set });
    };
    add('z-update', 'Update', '2022-01-01T00:00:00Z');
    add('b-update', 'Update', '2022-01-01T00:00:00.9Z');
    add('a-update', 'Update', '2022-01-02T00:00:00Z');
    add('late-apply', 'Apply', '2022-01-03T00:00:00Z');
    add('early-apply', 'Apply', '2022-01-01T00:00:00Z');
    add('kubelet', 'Update', '2022-01-01T00:00:00Z', 'status');
    const encoded = encodeManagedFields(managers) ?? [];
    expect(encoded.map((e) => `${e.manager}/${e.subresource ?? ''}`)).to.deep.equal([
      'early-apply/', 'late-apply/', 'b-update/', 'kubelet/status', 'z-update/', 'a-update/',
    ]);
    // Keys in ManagedFieldsEntry field order; time omitted when unknown.
    expect(Object.keys(encoded[3] as object)).to.deep.equal(['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1', 'subresource']);
    expect(encodeManagedFields(new Map())).to.equal(undefined);
  });

  it('round-trips entries', () => {
    const raw = [entry('kubectl', 'Apply', '2022-01-01T00:00:00Z', { 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:x': {} } } })];
    expect(encodeManagedFields(decodeManagedFields(raw))).to.deep.equal(raw);
  });

  it('recognises the reset request: one empty entry, not an empty list (spec §4.2)', () => {
    expect(isManagedFieldsReset([{}])).to.equal(true);
    expect(isManagedFieldsReset([])).to.equal(false);
    expect(isManagedFieldsReset(undefined)).to.equal(false);
    expect(isManagedFieldsReset([{ manager: 'x' }])).to.equal(false);
  });
});
