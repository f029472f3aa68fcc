import { expect } from 'chai';
import { ApiError } from '../../../../src/util';
import { negotiateResponse, requestRepresentation } from '../../../../src/endpoints/negotiation';

describe('content negotiation', () => {
  it('defaults to JSON and honours the client order', () => {
    expect(negotiateResponse(undefined, true).representation).to.equal('json');
    expect(negotiateResponse('application/yaml, application/json', true).representation).to.equal('yaml');
    expect(negotiateResponse('application/vnd.kubernetes.protobuf,application/json', true).representation).to.equal('protobuf');
  });

  it('falls back past Protobuf where a type has none, and past conversions it does not serve', () => {
    expect(negotiateResponse('application/vnd.kubernetes.protobuf,application/json', false).representation).to.equal('json');
    // kubectl 1.32 asks for aggregated discovery first; v1.25 answers plain discovery JSON.
    const discovery = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
    expect(negotiateResponse(discovery, false).representation).to.equal('json');
  });

  it('orders by quality factor, keeps the client order among equals, and drops q=0', () => {
    expect(negotiateResponse('application/json;q=0.5, application/yaml', true).representation).to.equal('yaml');
    expect(negotiateResponse('application/yaml;q=0.9, application/json;q=0.9', true).representation).to.equal('yaml');
    expect(negotiateResponse('application/vnd.kubernetes.protobuf;q=0, */*;q=0.1', true).representation).to.equal('json');
  });

  it('answers 406 when nothing in Accept fits, and 415 for an unknown body type', () => {
    try {
      negotiateResponse('text/html', true);
      expect.fail('no error');
    } catch (err) {
      expect((err as ApiError).code).to.equal(406);
      expect((err as ApiError).reason).to.equal('NotAcceptable');
    }
    try {
      requestRepresentation('text/plain', true);
      expect.fail('no error');
    } catch (err) {
      expect((err as ApiError).code).to.equal(415);
    }
    expect(requestRepresentation('application/json; charset=utf-8', true)).to.equal('json');
    expect(requestRepresentation(undefined, true)).to.equal('json');
  });
});
