import { expect } from 'chai';
import { shouldUpdateSpec } from '../../../../src/controllers/flowcontrol-bootstrap';

describe('flowcontrol bootstrap: v1.25\'s autoupdate-spec rule', () => {
  it('follows a boolean annotation, else updates only what the server alone wrote (generation 1)', () => {
    const annotated = (value: string, generation = 5) => ({ annotations: { 'apf.kubernetes.io/autoupdate-spec': value }, generation });
    expect(shouldUpdateSpec(annotated('true'))).to.equal(true);
    expect(shouldUpdateSpec(annotated('T'))).to.equal(true);
    expect(shouldUpdateSpec(annotated('false', 1))).to.equal(false);
    expect(shouldUpdateSpec(annotated('maybe', 1))).to.equal(true);
    expect(shouldUpdateSpec(annotated('maybe', 2))).to.equal(false);
    expect(shouldUpdateSpec({ generation: 1 })).to.equal(true);
    expect(shouldUpdateSpec({ generation: 3 })).to.equal(false);
  });
});
