import { expect } from 'chai';
import { findDuplicateFields, scanDuplicateFields } from '../../../../../src/apis/schema';

describe('src/apis/schema findDuplicateFields', () => {
  it('finds nothing in JSON without repeated keys', () => {
    expect(findDuplicateFields('{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}')).to.deep.equal([]);
  });

  it('names repeated keys by their path, with list indices, in text order', () => {
    const text = '{"metadata":{"name":"a","name":"b"},"spec":{"containers":[{"name":"x"},{"name":"y","image":"i","image":"j"}]},"kind":"A","kind":"B"}';
    expect(findDuplicateFields(text)).to.deep.equal(['metadata.name', 'spec.containers[1].image', 'kind']);
  });

  it('is not fooled by keys inside string values, escapes or whitespace', () => {
    const text = ' { "a" : "{\\"a\\":1,\\"a\\":2}" ,\n "b\\u0041" : [ 1 , true , null , -2.5e3 ], "bA": 0 } ';
    expect(findDuplicateFields(text)).to.deep.equal(['bA']);
  });

  it('tells how many distinct keys came before each repetition', () => {
    expect(scanDuplicateFields('{"a":1,"b":2,"a":3,"c":4,"b":5}')).to.deep.equal([
      { parentPath: '', key: 'a', distinctKeysBefore: 2 },
      { parentPath: '', key: 'b', distinctKeysBefore: 3 },
    ]);
  });
});
