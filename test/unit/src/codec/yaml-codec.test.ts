import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { EXPANDED_TEXT_BYTES_MAX, YamlCodecError, compareYamlV2Keys, decodeYaml, fromYaml, toYaml } from '../../../../src/codec';
import { packagePath } from '../../../../src/util';

// The YAML of each fixture was written by the Kubernetes YAML serializer (sigs.k8s.io/yaml over
// gopkg.in/yaml.v2), kubernetes/api testdata/HEAD at v0.25.16.
const fixtureDir = packagePath('test', 'fixtures', 'k8s-testdata-v1.25');
const fixtures = readdirSync(fixtureDir)
  .filter((file) => file.endsWith('.yaml'))
  .map((file) => file.slice(0, -'.yaml'.length))
  .sort();

function expectYamlError(action: () => unknown, reason: string): YamlCodecError {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  expect(caught).to.be.instanceOf(YamlCodecError);
  expect((caught as YamlCodecError).reason).to.equal(reason);
  return caught as YamlCodecError;
}

/** Anchors a0..a<levels>, each a flow sequence of `fanout` aliases of the one before. */
function laughs(levels: number, fanout: number): string {
  let text = `a0: &a0 [${Array(fanout).fill('"lol"').join(',')}]\n`;
  for (let level = 1; level <= levels; level++) text += `a${level}: &a${level} [${Array(fanout).fill(`*a${level - 1}`).join(',')}]\n`;
  return text;
}

function nestedFlow(depth: number): string {
  return `a: ${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}\n`;
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

describe('YAML codec bounds (hostile bodies)', () => {
  it('refuses a billion-laughs alias bomb with yaml.v2\'s words', () => {
    const error = expectYamlError(() => fromYaml(`apiVersion: v1\nkind: ConfigMap\n${laughs(9, 9)}`), 'ExcessiveAliasing');
    expect(error.message).to.equal('yaml: document contains excessive aliasing');
    expectYamlError(() => decodeYaml(laughs(9, 9), true), 'ExcessiveAliasing');
  });

  it('follows aliases within yaml.v2\'s ratio and refuses one level more', () => {
    // yaml.v2 decode.go: 2 levels of 10 aliases are 1,320 alias decodes of 1,358 (97%, allowed);
    // 3 levels are 13,530 of 13,592 (99.5%, over its 99%).
    const value = fromYaml(laughs(2, 10)) as Record<string, unknown[][]>;
    expect(value.a2).to.have.length(10);
    expect(value.a2[9][9]).to.deep.equal(Array(10).fill('lol'));
    expectYamlError(() => fromYaml(laughs(3, 10)), 'ExcessiveAliasing');
  });

  it('reads merge keys, counting the merged mapping as yaml.v2 does', () => {
    expect(fromYaml('base: &base {a: 1, b: 2}\nmerged:\n  <<: *base\n  b: 3\n')).to.deep.equal({ base: { a: 1, b: 2 }, merged: { a: 1, b: 3 } });
  });

  it('refuses 1,001 levels of nesting as a JSON body is refused (1,000 are read on the decoder thread: yaml-body-decoder.test)', () => {
    const error = expectYamlError(() => fromYaml(nestedFlow(1001)), 'TooDeep');
    expect(error.message).to.equal('the request body nests more than 1000 levels deep');
  });

  it('refuses deep nesting in every notation before building anything', () => {
    expectYamlError(() => fromYaml(`a: ${'['.repeat(3_000_000)}`), 'TooDeep');
    expectYamlError(() => fromYaml(`a: ${'{b: '.repeat(5000)}`), 'TooDeep');
    expectYamlError(() => fromYaml(`a:\n  ${'- '.repeat(1_000_000)}x\n`), 'TooDeep');
    const block = Array.from({ length: 1500 }, (_, i) => `${' '.repeat(i)}k:`).join('\n');
    expectYamlError(() => fromYaml(`${block} 1\n`), 'TooDeep');
  });

  it('counts the depth an alias brings into a nesting', () => {
    const deep = `${'['.repeat(600)}${']'.repeat(600)}`;
    expect(() => fromYaml(`a: &x ${deep}\n`)).not.to.throw();
    expectYamlError(() => fromYaml(`a: &x ${deep}\nb: ${'['.repeat(600)}*x${']'.repeat(600)}\n`), 'TooDeep');
  });

  it('refuses a value whose aliases expand beyond the expansion limit', () => {
    const long = 'x'.repeat(1024 * 1024);
    const aliases = Math.ceil(EXPANDED_TEXT_BYTES_MAX / long.length) + 1;
    expect(aliases).to.be.below(100); // under the count where yaml.v2 starts judging the ratio
    expectYamlError(() => fromYaml(`a: &s ${long}\nb: [${Array(aliases).fill('*s').join(',')}]\n`), 'TooLarge');
  });

  it('reads a mebibyte of tiny nodes, keeps the last duplicate key, and never quotes the text in an error', () => {
    const items = Array(500_000).fill('1').join(',');
    expect((JSON.parse(decodeYaml(`a: [${items}]\n`, true).json) as { a: number[] }).a).to.have.length(500_000);
    const error = expectYamlError(() => fromYaml('password: s3cr3t\n  bad: [\n'), 'Malformed');
    expect(error.message).not.to.contain('s3cr3t');
  });
});

