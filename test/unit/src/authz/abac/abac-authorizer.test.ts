import { expect } from 'chai';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AbacAuthorizer, parsePolicyFile } from '../../../../../src/authz/abac/abac-authorizer';
import { nonResourceAttributes, resourceAttributes, user } from '../memory-feed';

const FILE = [
  '# comment line',
  '',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "alice", "namespace": "*", "resource": "*", "apiGroup": "*"}}',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "bob", "namespace": "projectCaribou", "resource": "pods", "readonly": true}}',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"group": "system:authenticated", "readonly": true, "nonResourcePath": "/apis/*"}}',
  '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "*", "readonly": true, "nonResourcePath": "/version"}}',
  '{"user": "legacy", "readonly": true}',
].join('\n');

describe('authz/abac AbacAuthorizer', () => {
  const abac = new AbacAuthorizer(parsePolicyFile(FILE, 'policy.jsonl'));

  it('allows by user with wildcards, and says "No policy matched." otherwise', async () => {
    expect(await abac.authorize(resourceAttributes({ user: user('alice'), verb: 'delete', apiGroup: 'apps', resource: 'deployments', namespace: 'x', name: 'd' }))).to.deep.equal({ decision: 'allow', reason: '' });
    expect(await abac.authorize(resourceAttributes({ user: user('mallory'), verb: 'get', namespace: 'x' }))).to.deep.equal({ decision: 'no-opinion', reason: 'No policy matched.' });
  });

  it('restricts readonly policies to get, list and watch, and matches namespace and resource', async () => {
    const bob = user('bob');
    expect((await abac.authorize(resourceAttributes({ user: bob, verb: 'list', namespace: 'projectCaribou' }))).decision).to.equal('allow');
    expect((await abac.authorize(resourceAttributes({ user: bob, verb: 'create', namespace: 'projectCaribou' }))).decision).to.equal('no-opinion');
    expect((await abac.authorize(resourceAttributes({ user: bob, verb: 'list', namespace: 'other' }))).decision).to.equal('no-opinion');
    // apiGroup omitted in a v1beta1 policy means the core group only.
    expect((await abac.authorize(resourceAttributes({ user: bob, verb: 'list', namespace: 'projectCaribou', apiGroup: 'metrics.k8s.io' }))).decision).to.equal('no-opinion');
  });

  it('matches group subjects, * users (authenticated only) and non-resource path prefixes', async () => {
    const authed = user('carol', ['system:authenticated']);
    expect((await abac.authorize(nonResourceAttributes(authed, 'get', '/apis/apps'))).decision).to.equal('allow');
    expect((await abac.authorize(nonResourceAttributes(authed, 'post', '/apis/apps'))).decision).to.equal('no-opinion');
    expect((await abac.authorize(nonResourceAttributes(authed, 'get', '/version'))).decision).to.equal('allow');
    expect((await abac.authorize(nonResourceAttributes(user('system:anonymous', ['system:unauthenticated']), 'get', '/version'))).decision).to.equal('no-opinion');
  });

  it('reads the unversioned form as v1.25 converts it: empty namespace and resource mean everything', async () => {
    const legacy = user('legacy');
    expect((await abac.authorize(resourceAttributes({ user: legacy, verb: 'get', apiGroup: 'batch', resource: 'jobs', namespace: 'n', name: 'j' }))).decision).to.equal('allow');
    expect((await abac.authorize(nonResourceAttributes(legacy, 'get', '/healthz'))).decision).to.equal('allow');
    expect((await abac.authorize(resourceAttributes({ user: legacy, verb: 'delete', namespace: 'n', name: 'j' }))).decision).to.equal('no-opinion');
  });

  it('names the file and line of a bad policy', async () => {
    expect(() => parsePolicyFile('{"user":"a"}\n{not json}\n', 'p.jsonl')).to.throw(/^error reading policy file p\.jsonl, line 2: \{not json\}: invalid JSON: /);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'abac-'));
    const file = path.join(dir, 'policy.jsonl');
    await fs.writeFile(file, FILE);
    expect(AbacAuthorizer.fromFile(file).policies).to.have.length(5);
    expect(() => AbacAuthorizer.fromFile(path.join(dir, 'missing'))).to.throw(/^error reading policy file .*missing: ENOENT/);
    await fs.rm(dir, { recursive: true });
  });

  it('lists the rules of matching policies for SelfSubjectRulesReview', async () => {
    const rules = await abac.rulesFor(user('bob'), 'projectCaribou');
    expect(rules.resourceRules).to.deep.equal([{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'], resourceNames: [] }]);
  });
});
