/**
 * certificates.IsAuthorizedForSignerName (kubernetes pkg/apis/certificates): may `user` use
 * `verb` (approve, sign) on the signer? Asked of the authorizers as the resource `signers` of
 * certificates.k8s.io, any version, named after the signer, then after its `<domain>/*`
 * wildcard. Requests without a user (the server's own) are allowed.
 */
import type { UserInfo } from '../../authn';
import type { AdmissionAuthorizer } from '../plugin-registry';

export async function isAuthorizedForSigner(authorizer: AdmissionAuthorizer, user: UserInfo | undefined, verb: string, signerName: string): Promise<boolean> {
  if (user === undefined) return true;
  const ask = async (name: string) => {
    try {
      const result = await authorizer.authorize({ user, verb, isResourceRequest: true, path: '', apiGroup: 'certificates.k8s.io', apiVersion: '*', resource: 'signers', subresource: '', namespace: '', name });
      return result.decision === 'allow';
    } catch {
      return false;
    }
  };
  if (await ask(signerName)) return true;
  return ask(`${signerName.split('/')[0]}/*`);
}
