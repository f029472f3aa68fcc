import { expect } from 'chai';
import { decodeYaml, fromYaml } from '../../../../src/codec';

describe('duplicate keys of a YAML body (decodeYaml)', () => {
  it('names every repeated key with its line, as yaml.v2 UnmarshalStrict does', () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\ndata:\n  x: "1"\n  x: "2"\n';
    expect(decodeYaml(text, true).duplicateKeysError).to.equal('error converting YAML to JSON: yaml: unmarshal errors:\n  line 5: key "name" already set in map\n  line 8: key "x" already set in map');
    // The lenient reading keeps the last value, as kube-apiserver stores it.
    expect(fromYaml(text)).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b' }, data: { x: '2' } });
    expect(JSON.parse(decodeYaml(text, true).json)).to.deep.equal(fromYaml(text));
  });

  it('finds nothing in a body without repeats, and does not look unless asked', () => {
    expect(decodeYaml('a: 1\nb:\n  a: 2\n', true).duplicateKeysError).to.equal(undefined);
    expect(decodeYaml('a: 1\na: 2\n', false).duplicateKeysError).to.equal(undefined);
  });
});
