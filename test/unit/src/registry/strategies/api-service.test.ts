/**
 * The APIService strategy (kube-aggregator pkg/registry/apiservice/strategy.go, v1.25): a local
 * APIService is Available at creation, a remote one starts without conditions; the main resource
 * keeps the status and /status keeps the spec and the metadata kube keeps.
 */
import { expect } from 'chai';
import { strategyOfObject } from './strategy-of-object';
import type { JsonObject } from '../../../../../src/apis/object';

const apiService = (service?: JsonObject): JsonObject => ({
  apiVersion: 'apiregistration.k8s.io/v1',
  kind: 'APIService',
  metadata: { name: 'v1.example.com', labels: { team: 'a' } },
  spec: { group: 'example.com', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 100, ...(service === undefined ? {} : { service }) },
  status: { conditions: [{ type: 'Available', status: 'False', reason: 'Sent', message: 'by the client' }] },
});

describe('registry strategy: APIService', () => {
  it('a local APIService is created Available (reason Local); what the client sent as status is dropped', () => {
    const object = apiService();
    strategyOfObject(object).prepareForCreate(object);
    const conditions = (object.status as { conditions: JsonObject[] }).conditions;
    expect(conditions).to.have.length(1);
    expect(conditions[0]).to.deep.include({ type: 'Available', status: 'True', reason: 'Local', message: 'Local APIServices are always available' });
    expect(String(conditions[0].lastTransitionTime)).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  });

  it('a remote APIService is created with an empty status', () => {
    const object = apiService({ namespace: 'ns', name: 'svc', port: 443 });
    strategyOfObject(object).prepareForCreate(object);
    expect(object.status).to.deep.equal({});
  });

  it('an update keeps the stored status; a status update keeps the spec, labels and annotations', () => {
    const old = apiService();
    const strategy = strategyOfObject(old);
    const update = { ...apiService(), status: { conditions: [] } };
    strategy.prepareForUpdate(update, old, '');
    expect(update.status).to.deep.equal(old.status);
    const statusUpdate: JsonObject = { ...apiService({ namespace: 'ns', name: 'svc' }), metadata: { name: 'v1.example.com', labels: { team: 'b' }, annotations: { a: 'b' } } };
    strategy.prepareForUpdate(statusUpdate, old, 'status');
    expect(statusUpdate.spec).to.deep.equal(old.spec);
    expect(statusUpdate.metadata).to.deep.equal({ name: 'v1.example.com', labels: { team: 'a' } });
    expect(strategy.resetFields('')).to.deep.equal([]);
  });
});
