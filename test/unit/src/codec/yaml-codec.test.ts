import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { YamlCodecError, compareYamlV2Keys, fromYaml, toYaml } from '../../../../src/codec';
import { packagePath } from '../../../../src/util';

// The YAML of each fixture was written by the Kubernetes YAML serializer (sigs.k8s.io/yaml over
// gopkg.in/yaml.v2), kubernetes/api testdata/HEAD at v0.25.16.
const fixtureDir = packagePath('test', 'fixtures', 'k8s-testdata-v1.25');
const fixtures = readdirSync(fixtureDir)
  .filter((file) => file.endsWith('.yaml'))
  .map((file) => file.slice(0, -'.yaml'.length))
  .sort();

function expectYamlError(action: () => unknown, reason: string): void {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  expect(caught).to.be.instanceOf(YamlCodecError);
  expect((caught as YamlCodecError).reason).to.equal(reason);
}

describe('YAML codec against the kube-apiserver v1.25 fixtures', () => {
  it('finds all 142 fixture kinds', () => {
    expect(fixtures).to.have.length(142);
  });

  for (const fixture of fixtures) {
    const yaml = readFileSync(join(fixtureDir, `${fixture}.yaml`), 'utf8');
    const json = JSON.parse(readFileSync(join(fixtureDir, `${fixture}.json`), 'utf8')) as unknown;

    it(`reads ${fixture}.yaml as the value of ${fixture}.json`, () => {
      expect(fromYaml(yaml)).to.deep.equal(json);
    });

    it(`writes ${fixture}.json as the text of ${fixture}.yaml`, () => {
      expect(toYaml(json)).to.equal(yaml);
    });
  }
});

describe('YAML codec', () => {
  it('sorts keys in yaml.v2 order: non-letters first, digit runs by value', () => {
    // gopkg.in/yaml.v2 sorter.go keyList.Less.
    const keys = ['b', 'a10', 'ab', 'a2', '_x', 'B', 'a_b'];
    expect([...keys].sort(compareYamlV2Keys)).to.deep.equal(['_x', 'B', 'a_b', 'a2', 'a10', 'ab', 'b']);
    expect(toYaml({ a10: 1, a2: 2 })).to.equal('a2: 2\na10: 1\n');
  });

  it('double-quotes strings that YAML 1.1 would read as another type', () => {
    expect(toYaml({ data: { a: 'yes', b: 'true', c: '1', d: '', e: 'null', f: '2008-01-01T01:01:01Z', g: 'plain' } })).to.equal(
      'data:\n  a: "yes"\n  b: "true"\n  c: "1"\n  d: ""\n  e: "null"\n  f: "2008-01-01T01:01:01Z"\n  g: plain\n',
    );
  });

  it('reads YAML 1.1 scalars as yaml.v2 does and keeps timestamps as strings', () => {
    expect(fromYaml('a: yes\nb: off\nc: 012\nd: 0x1f\ne: 2008-01-01T01:01:01Z\nf: 1:20\ng: ~\n')).to.deep.equal({
      a: true,
      b: false,
      c: 10,
      d: 31,
      e: '2008-01-01T01:01:01Z',
      f: '1:20',
      g: null,
    });
  });

  it('reads an empty text as null', () => {
    expect(fromYaml('')).to.equal(null);
    expect(fromYaml('# only a comment\n')).to.equal(null);
  });

  it('rejects more than one document', () => {
    expectYamlError(() => fromYaml('kind: A\n---\nkind: B\n'), 'MultipleDocuments');
  });

  it('rejects malformed YAML', () => {
    expectYamlError(() => fromYaml('a: [1\n'), 'Malformed');
  });
});
