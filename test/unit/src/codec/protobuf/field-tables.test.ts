import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import * as protobuf from 'protobufjs';
import { alwaysPrintedFields } from '../../../../../src/codec/protobuf/always-printed-fields';
import { goPointerScalarFields, pointerFieldKey } from '../../../../../src/codec/protobuf/go-pointer-scalar-fields';
import { packagePath } from '../../../../../src/util';

const descriptor = JSON.parse(readFileSync(packagePath('src', 'codec', 'data', 'k8s-protobuf-v1.25.json'), 'utf8')) as protobuf.INamespace;
const root = protobuf.Root.fromJSON(descriptor);
root.resolveAll();

function allTypes(namespace: protobuf.NamespaceBase): protobuf.Type[] {
  return namespace.nestedArray.flatMap((nested) => [
    ...(nested instanceof protobuf.Type ? [nested] : []),
    ...(nested instanceof protobuf.Namespace ? allTypes(nested) : []),
  ]);
}

describe('codec field tables against the v1.25 descriptor', () => {
  const types = allTypes(root);

  it('names only scalar fields of the descriptor as Go pointer fields', () => {
    const scalarKeys = new Set(
      types.flatMap((type) => type.fieldsArray.filter((field) => field.resolvedType === null).map((field) => pointerFieldKey(type.fullName.slice(1), field.name))),
    );
    expect([...goPointerScalarFields].filter((key) => !scalarKeys.has(key))).to.deep.equal([]);
  });

  it('names only fields of the descriptor as always printed', () => {
    const keys = new Set(types.flatMap((type) => type.fieldsArray.map((field) => `${type.fullName.slice(1)}.${field.name}`)));
    expect([...alwaysPrintedFields].filter((key) => !keys.has(key))).to.deep.equal([]);
  });
});
