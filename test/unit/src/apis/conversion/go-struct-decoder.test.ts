import { expect } from 'chai';
import {
  decodeGoJson,
  goInt32,
  goQuantity,
  goSlice,
  goString,
  goStringMap,
  goStruct,
  goTime,
} from '../../../../../src/apis/conversion/go-struct-decoder';

// encoding/json (Go 1.19, which builds kube v1.25) rules for json.Unmarshal into structs, and the
// UnmarshalJSON methods of resource.Quantity and metav1.Time (k8s.io/apimachinery).
describe('decodeGoJson', () => {
  const pair = goStruct({ name: goString, count: goInt32 });

  it('matches keys to fields case-insensitively, the last match winning, and skips unknown keys', () => {
    expect(decodeGoJson('{"NAME":"a","count":1,"name":"b","extra":true}', pair)).to.deep.equal({ name: 'b', count: 1 });
  });

  it('leaves fields given null at their zero value and decodes null slice elements as zero values', () => {
    expect(decodeGoJson('{"name":null,"count":2}', pair)).to.deep.equal({ count: 2 });
    expect(decodeGoJson('[null,{"name":"x"}]', goSlice(pair))).to.deep.equal([{}, { name: 'x' }]);
    expect(decodeGoJson('{"a":null}', goStringMap)).to.deep.equal({ a: '' });
    expect(decodeGoJson('null', goSlice(pair))).to.equal(null);
  });

  it('fails the whole document on any value of the wrong type', () => {
    expect(decodeGoJson('{"name":1}', pair)).to.equal(undefined);
    expect(decodeGoJson('[{"count":"1"}]', goSlice(pair))).to.equal(undefined);
    expect(decodeGoJson('[{"count":2147483648}]', goSlice(pair))).to.equal(undefined);
    expect(decodeGoJson('[{"count":1.5}]', goSlice(pair))).to.equal(undefined);
    expect(decodeGoJson('{"a":1}', goStringMap)).to.equal(undefined);
    expect(decodeGoJson('{', pair)).to.equal(undefined);
  });

  it('reads quantities as ParseQuantity does and keeps them in canonical form', () => {
    expect(decodeGoJson('["1000m","0.5",2," 3Ki "]', goSlice(goQuantity))).to.deep.equal(['1', '500m', '2', '3Ki']);
    expect(decodeGoJson('["1 apple"]', goSlice(goQuantity))).to.equal(undefined);
    expect(decodeGoJson('[true]', goSlice(goQuantity))).to.equal(undefined);
  });

  it('reads times as RFC3339 and writes them back in UTC seconds, as metav1.Time does', () => {
    expect(decodeGoJson('["2024-01-01T01:00:00.5+01:00"]', goSlice(goTime))).to.deep.equal(['2024-01-01T00:00:00Z']);
    expect(decodeGoJson('["yesterday"]', goSlice(goTime))).to.equal(undefined);
  });
});
