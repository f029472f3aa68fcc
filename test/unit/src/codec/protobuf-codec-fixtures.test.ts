import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ProtobufCodec, type TypeName } from '../../../../src/codec';
import { packagePath } from '../../../../src/util';
import type { JsonObject } from '../../../../src/apis/object';

// Go-encoded objects of every v1.25 kind, with their JSON: kubernetes/api testdata/HEAD at v0.25.16
// (see the folder's README). The file name is <group>.<version>.<Kind>, with `core` for the core group.
const fixtureDir = packagePath('test', 'fixtures', 'k8s-testdata-v1.25');

function typeNameOf(fixture: string): TypeName {
  const parts = fixture.split('.');
  const kind = parts.pop() ?? '';
  const version = parts.pop() ?? '';
  const group = parts.join('.');
  return { apiVersion: group === 'core' ? version : `${group}/${version}`, kind };
}

const fixtures = readdirSync(fixtureDir)
  .filter((file) => file.endsWith('.pb'))
  .map((file) => file.slice(0, -'.pb'.length))
  .sort();

describe('ProtobufCodec against the kube-apiserver v1.25 fixtures', () => {
  const codec = ProtobufCodec.load();

  it('finds all 142 fixture kinds', () => {
    expect(fixtures).to.have.length(142);
  });

  for (const fixture of fixtures) {
    // WatchEvent has no TypeMeta, so its envelope names no type and the file name must.
    const as = typeNameOf(fixture);
    const protobufBody = readFileSync(join(fixtureDir, `${fixture}.pb`));
    const json = JSON.parse(readFileSync(join(fixtureDir, `${fixture}.json`), 'utf8')) as JsonObject;

    it(`decodes ${fixture}.pb to the object of ${fixture}.json`, () => {
      expect(codec.decode(protobufBody, as)).to.deep.equal(json);
    });

    it(`encodes ${fixture}.json to the bytes of ${fixture}.pb`, () => {
      const encoded = codec.encode(json, as);
      expect(encoded.toString('hex')).to.equal(protobufBody.toString('hex'));
    });
  }
});
