import { expect } from 'chai';
import { auditEventOf, microTime } from '../../../../src/audit';
import type { AuditRecord } from '../../../../src/audit';
import type { RequestContext, RequestInfo } from '../../../../src/endpoints';

const info = { isResourceRequest: true, path: '/api/v1/namespaces/default/pods', verb: 'create', group: '', version: 'v1', namespace: 'default', resource: 'pods', name: '', subresource: '' } as unknown as RequestInfo;
const user = { name: 'alice', uid: 'u-1', groups: ['system:authenticated'], extra: {} };

function auditRecord(extra: Partial<AuditRecord> = {}): AuditRecord {
  return {
    auditId: 'a-1',
    stage: 'ResponseComplete',
    level: 'Metadata',
    omitManagedFields: false,
    requestReceivedTimestamp: new Date('2022-09-01T10:00:00.123Z'),
    stageTimestamp: new Date('2022-09-01T10:00:00.456Z'),
    method: 'POST',
    verb: 'create',
    requestUri: '/api/v1/namespaces/default/pods?fieldManager=kubectl-run',
    user,
    info,
    name: '',
    sourceIps: ['10.0.0.1', '127.0.0.1'],
    userAgent: 'kubectl/v1.25.0',
    responseCode: 201,
    annotations: { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': '' },
    context: {} as RequestContext,
    ...extra,
  };
}

const body = (object: unknown, contentType = 'application/json') => ({ contentType, bytes: Buffer.from(JSON.stringify(object)) });
const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p1', namespace: 'default', managedFields: [{ manager: 'kubectl' }] }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };

describe('audit: the Event of a record (audit.k8s.io/v1)', () => {
  it('writes v1.25\'s fields in their order, with the objectRef filled from the request\'s object', () => {
    const event = auditEventOf(auditRecord({ requestBody: body(pod) }));
    expect(Object.keys(event)).to.deep.equal(['kind', 'apiVersion', 'level', 'auditID', 'stage', 'requestURI', 'verb', 'user', 'sourceIPs', 'userAgent', 'objectRef', 'responseStatus', 'requestReceivedTimestamp', 'stageTimestamp', 'annotations']);
    expect(event.user).to.deep.equal({ username: 'alice', uid: 'u-1', groups: ['system:authenticated'] });
    expect(event.objectRef).to.deep.equal({ resource: 'pods', namespace: 'default', name: 'p1', apiVersion: 'v1' });
    expect(event.responseStatus).to.deep.equal({ metadata: {}, code: 201 });
    expect(event.requestReceivedTimestamp).to.equal('2022-09-01T10:00:00.123000Z');
    expect(event).not.to.have.property('requestObject');
  });

  it('keeps a failure\'s Status in responseStatus', () => {
    const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'pods "p1" already exists', reason: 'AlreadyExists', details: { name: 'p1', kind: 'pods' }, code: 409 };
    expect(auditEventOf(auditRecord({ responseCode: 409, responseStatus: status })).responseStatus).to.deep.equal({ metadata: {}, status: 'Failure', message: 'pods "p1" already exists', reason: 'AlreadyExists', details: { name: 'p1', kind: 'pods' }, code: 409 });
  });

  it('adds the request object at Request, the response object at RequestResponse, without managedFields when asked', () => {
    const request = auditEventOf(auditRecord({ level: 'Request', requestBody: body(pod), responseObject: pod }));
    expect((request.requestObject as typeof pod).spec).to.deep.equal(pod.spec);
    expect(request).not.to.have.property('responseObject');
    const full = auditEventOf(auditRecord({ level: 'RequestResponse', omitManagedFields: true, requestBody: body(pod), responseObject: { ...pod, metadata: { ...pod.metadata, uid: 'x' } } }));
    expect((full.requestObject as typeof pod).metadata).to.deep.equal({ name: 'p1', namespace: 'default' });
    expect((full.responseObject as typeof pod).metadata).to.deep.equal({ name: 'p1', namespace: 'default', uid: 'x' });
  });

  it('logs a YAML body as the handler decoded it (as JSON), and never parses YAML itself', () => {
    const bytes = Buffer.from('metadata:\n  labels:\n    a: b\n');
    const patched = auditEventOf(auditRecord({ level: 'Request', verb: 'patch', requestBody: { contentType: 'application/apply-patch+yaml', bytes, yamlAsJson: '{"metadata":{"labels":{"a":"b"}}}' } }));
    expect(patched.requestObject).to.deep.equal({ metadata: { labels: { a: 'b' } } });
    const undecoded = auditEventOf(auditRecord({ level: 'Request', verb: 'create', requestBody: { contentType: 'application/yaml', bytes } }));
    expect(undecoded).not.to.have.property('requestObject');
  });

  it('keeps the mutating webhook\'s patch annotation only from level Request', () => {
    const annotations = { 'mutation.webhook.admission.k8s.io/round_0_index_0': '{"mutated":true}', 'patch.webhook.admission.k8s.io/round_0_index_0': '{"patch":[]}' };
    expect(Object.keys(auditEventOf(auditRecord({ annotations })).annotations as object)).to.deep.equal(['mutation.webhook.admission.k8s.io/round_0_index_0']);
    expect(Object.keys(auditEventOf(auditRecord({ level: 'Request', annotations })).annotations as object)).to.have.length(2);
  });

  it('never writes a token: TokenReview, TokenRequest and Secret values are blanked', () => {
    const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'secret-token' }, status: { authenticated: true } };
    const event = auditEventOf(auditRecord({ level: 'RequestResponse', requestBody: body(review), responseObject: review }));
    expect(JSON.stringify(event)).not.to.include('secret-token');
    const request = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', status: { token: 'issued-token', expirationTimestamp: 'x' } };
    expect(JSON.stringify(auditEventOf(auditRecord({ level: 'RequestResponse', responseObject: request })))).not.to.include('issued-token');
    const secrets = { apiVersion: 'v1', kind: 'SecretList', items: [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { token: 'c2VjcmV0' }, stringData: { password: 'hunter2' } }] };
    const listed = JSON.stringify(auditEventOf(auditRecord({ level: 'RequestResponse', responseObject: secrets })));
    expect(listed).not.to.include('c2VjcmV0');
    expect(listed).not.to.include('hunter2');
    expect(listed).to.include('"data":{"token":""}');
  });

  it('writes a failed authentication as kube does: no user, the kinds of credential tried', () => {
    const event = auditEventOf(auditRecord({ stage: 'ResponseStarted', user: undefined, responseCode: 401, authenticationFailure: 'Authentication failed, attempted: bearer' }));
    expect(event.user).to.deep.equal({});
    expect(event.responseStatus).to.deep.equal({ metadata: {}, message: 'Authentication failed, attempted: bearer', code: 401 });
  });

  it('writes impersonation as user and impersonatedUser', () => {
    const event = auditEventOf(auditRecord({ impersonatedUser: { name: 'bob', uid: '', groups: ['system:authenticated'], extra: {} } }));
    expect(event.impersonatedUser).to.deep.equal({ username: 'bob', groups: ['system:authenticated'] });
    expect(Object.keys(event).indexOf('impersonatedUser')).to.equal(Object.keys(event).indexOf('user') + 1);
  });

  it('formats MicroTime with six fractional digits in UTC', () => {
    expect(microTime(new Date('2022-01-02T03:04:05.007Z'))).to.equal('2022-01-02T03:04:05.007000Z');
  });
});
