import { expect } from 'chai';
import { fromYaml, yamlDuplicateKeysError } from '../../../../src/codec';

describe('yamlDuplicateKeysError', () => {
  it('names every repeated key with its line, as yaml.v2 UnmarshalStrict does', () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\ndata:\n  x: "1"\n  x: "2"\n';
    expect(yamlDuplicateKeysError(text)).to.equal('error converting YAML to JSON: yaml: unmarshal errors:\n  line 5: key "name" already set in map\n  line 8: key "x" already set in map');
    // The lenient reading keeps the last value, as kube-apiserver stores it.
    expect(fromYaml(text)).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b' }, data: { x: '2' } });
  });

  it('finds nothing in a body without repeats', () => {
    expect(yamlDuplicateKeysError('a: 1\nb:\n  a: 2\n')).to.equal(undefined);
  });
});
