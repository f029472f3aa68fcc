import { expect } from 'chai';
import { distinctHeaders } from '../../../../src/authn/headers';
import { impersonate, stripImpersonationHeaders, type ImpersonationAttributes, type ImpersonationOutcome } from '../../../../src/authn/impersonation';
import { ApiError } from '../../../../src/util/api-error';
import type { AuthorizationAttributes } from '../../../../src/authz/authorizer';

const caller = { name: 'bob', uid: 'bob-uid', groups: ['admins', 'system:authenticated'], extra: {} };

/** Allows what `allowed` lists as `resource[/subresource]:name`, records every question. */
function authorizer(allowed: string[]): { asked: ImpersonationAttributes[]; authorize: (a: ImpersonationAttributes) => Promise<{ decision: 'allow' | 'no-opinion'; reason: string }> } {
  const asked: ImpersonationAttributes[] = [];
  return {
    asked,
    authorize: async (attributes) => {
      asked.push(attributes);
      const resource = attributes.subresource === '' ? attributes.resource : `${attributes.resource}/${attributes.subresource}`;
      return { decision: allowed.includes(`${resource}:${attributes.name}`) ? 'allow' : 'no-opinion', reason: '' };
    },
  };
}

async function run(raw: string[], allowed: string[]): Promise<ImpersonationOutcome | ApiError> {
  return impersonate({ user: caller, headers: distinctHeaders(raw), authorize: authorizer(allowed).authorize });
}

function groupsOf(outcome: ImpersonationOutcome | ApiError): readonly string[] {
  if (outcome instanceof ApiError) throw new Error(`unexpected ${outcome.message}`);
  return outcome.user.groups;
}

describe('authn: impersonation', () => {
  it('leaves a request without impersonation headers as the caller', async () => {
    expect(await run(['Accept', 'application/json'], [])).to.deep.equal({ impersonated: false, user: caller });
  });

  it('asks impersonate on users, groups, userextras/<key> and uids in v1.25\'s order and builds the user', async () => {
    const a = authorizer(['users:jane', 'groups:dev', 'groups:ops', 'userextras/scopes:view', 'userextras/acme.com/project:p1', 'uids:1234']);
    const outcome = await impersonate({
      user: caller,
      headers: distinctHeaders([
        'Impersonate-Uid', '1234',
        'Impersonate-Extra-Scopes', 'view',
        'Impersonate-Group', 'dev',
        'Impersonate-User', 'jane',
        'Impersonate-Group', 'ops',
        'Impersonate-Extra-acme.com%2Fproject', 'p1',
      ]),
      authorize: a.authorize,
    });
    expect(outcome).to.deep.equal({
      impersonated: true,
      user: { name: 'jane', uid: '1234', groups: ['dev', 'ops', 'system:authenticated'], extra: { scopes: ['view'], 'acme.com/project': ['p1'] } },
      originalUser: caller,
    });
    expect(a.asked.map((x) => [x.resource, x.subresource, x.apiGroup, x.name])).to.deep.equal([
      ['users', '', '', 'jane'],
      ['groups', '', '', 'dev'],
      ['groups', '', '', 'ops'],
      ['userextras', 'scopes', 'authentication.k8s.io', 'view'],
      ['userextras', 'acme.com/project', 'authentication.k8s.io', 'p1'],
      ['uids', '', 'authentication.k8s.io', '1234'],
    ]);
    const first: AuthorizationAttributes = a.asked[0];
    expect(first).to.deep.include({ user: caller, verb: 'impersonate', isResourceRequest: true, namespace: '' });
  });

  it('impersonates a service account in its namespace, with its groups unless groups are given', async () => {
    const a = authorizer(['serviceaccounts:builder']);
    const outcome = await impersonate({ user: caller, headers: distinctHeaders(['Impersonate-User', 'system:serviceaccount:apps:builder']), authorize: a.authorize });
    expect(a.asked[0]).to.deep.include({ resource: 'serviceaccounts', namespace: 'apps', name: 'builder', apiGroup: '' });
    expect(outcome).to.deep.include({ impersonated: true });
    expect((outcome as { user: unknown }).user).to.deep.equal({
      name: 'system:serviceaccount:apps:builder', uid: '', groups: ['system:serviceaccounts', 'system:serviceaccounts:apps', 'system:authenticated'], extra: {},
    });
    const withGroups = await run(['Impersonate-User', 'system:serviceaccount:apps:builder', 'Impersonate-Group', 'dev'], ['serviceaccounts:builder', 'groups:dev']);
    expect(groupsOf(withGroups)).to.deep.equal(['dev', 'system:authenticated']);
  });

  it('gives system:anonymous system:unauthenticated, and adds system:authenticated only when no such group is asked for', async () => {
    const anonymous = await run(['Impersonate-User', 'system:anonymous'], ['users:system:anonymous']);
    expect(groupsOf(anonymous)).to.deep.equal(['system:unauthenticated']);
    const unauthenticated = await run(['Impersonate-User', 'jane', 'Impersonate-Group', 'system:unauthenticated'], ['users:jane', 'groups:system:unauthenticated']);
    expect(groupsOf(unauthenticated)).to.deep.equal(['system:unauthenticated']);
  });

  it('answers the first refusal with v1.25\'s 403', async () => {
    const user = await run(['Impersonate-User', 'jane'], []);
    expect(user).to.be.instanceOf(ApiError);
    expect((user as ApiError).toStatus()).to.deep.equal({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'users "jane" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope',
      reason: 'Forbidden', details: { name: 'jane', kind: 'users' }, code: 403,
    });
    const group = await run(['Impersonate-User', 'jane', 'Impersonate-Group', 'system:masters'], ['users:jane']);
    expect((group as ApiError).message).to.equal('groups "system:masters" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope');
    const sa = await run(['Impersonate-User', 'system:serviceaccount:kube-system:admin'], []);
    expect((sa as ApiError).message).to.equal('serviceaccounts "admin" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "kube-system"');
    const extra = await run(['Impersonate-User', 'jane', 'Impersonate-Extra-Scopes', 'all'], ['users:jane']);
    expect((extra as ApiError).message).to.equal('userextras.authentication.k8s.io "all" is forbidden: User "bob" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope');
    expect((extra as ApiError).details).to.deep.equal({ name: 'all', group: 'authentication.k8s.io', kind: 'userextras' });
  });

  it('answers groups, extras or a uid without Impersonate-User with v1.25\'s internal error', async () => {
    const error = await run(['Impersonate-Group', 'dev', 'Impersonate-Uid', 'u1'], ['groups:dev']);
    expect(error).to.be.instanceOf(ApiError);
    expect((error as ApiError).code).to.equal(500);
    expect((error as ApiError).message).to.equal('Internal error occurred: requested [{Group  dev    } {UID  u1  authentication.k8s.io/v1  }] without impersonating a user');
  });

  it('strips every impersonation header once applied', () => {
    const headers = distinctHeaders(['Impersonate-User', 'jane', 'impersonate-group', 'dev', 'Impersonate-Extra-X', 'y', 'Impersonate-Uid', '1', 'Accept', 'x']);
    expect(Object.keys(stripImpersonationHeaders(headers))).to.deep.equal(['accept']);
  });
});
