/**
 * Client-certificate authentication (spec 02 §5.1; `--client-ca-file`; apiserver
 * pkg/authentication/request/x509/x509.go with CommonNameUserConversion).
 *
 * - No certificate presented: not mine.
 * - A chain that does not verify against the trusted roots for client auth (x509-verifier.ts):
 *   failed, with `verifying certificate SN=..., SKID=..., AKID=... failed: <Go's reason>`.
 * - A verified leaf: user = its subject's CN, groups = its O values in order, no uid, no extra.
 *   A verified leaf without a CN is not mine (v1.25 lets the next authenticator try).
 *
 * The roots are the `--client-ca-file` bundle, plus the cluster CA that Carina issues its own
 * client certificates from (the integrator passes the union).
 */
import type { AuthenticationRequest, AuthenticationResult, RequestAuthenticator } from './authenticator';
import { NOT_MINE, authenticationFailed } from './authenticator';
import { certificateIdentifier, verifyCertificateChain, type CertificatePool } from './x509-verifier';

export interface X509AuthenticatorOptions {
  readonly roots: CertificatePool;
  /** Milliseconds since the epoch; Date.now by default. */
  readonly now?: () => number;
}

export class X509Authenticator implements RequestAuthenticator {
  readonly name = 'x509';
  private readonly now: () => number;

  constructor(private readonly options: X509AuthenticatorOptions) {
    this.now = options.now ?? Date.now;
  }

  async authenticate(request: AuthenticationRequest): Promise<AuthenticationResult> {
    return this.authenticateSync(request);
  }

  /** The same answer without a promise, for callers on a hot path. */
  authenticateSync(request: AuthenticationRequest): AuthenticationResult {
    const presented = request.peerCertificates;
    if (presented.length === 0) return NOT_MINE;
    const verification = verifyCertificateChain(presented, { roots: this.options.roots, nowMs: this.now() });
    if (!verification.ok) return authenticationFailed(`verifying certificate ${certificateIdentifier(presented[0])} failed: ${verification.reason}`);
    const leaf = verification.chains[0][0].fields;
    if (leaf.commonName === '') return NOT_MINE;
    return { outcome: 'authenticated', user: { name: leaf.commonName, uid: '', groups: [...leaf.organizations], extra: {} } };
  }
}
