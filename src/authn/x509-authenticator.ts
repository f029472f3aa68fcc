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
 *
 * Verified chains are remembered (by a hash of the presented DER, at most VERIFIED_CHAINS_MAX,
 * never past the earliest notAfter of the chain), so a client's every request does not repeat
 * the signature checks: a chain's verdict cannot change while its certificates are valid, since
 * the roots are fixed for the life of the server and client certificates are not revocable in
 * Kubernetes. Failures are not remembered.
 */
import type { AuthenticationRequest, AuthenticationResult, RequestAuthenticator } from './authenticator';
import { NOT_MINE, authenticationFailed } from './authenticator';
import { createHash } from 'node:crypto';
import type { UserInfo } from './user-info';
import { certificateIdentifier, verifyCertificateChain, type CertificatePool } from './x509-verifier';

const VERIFIED_CHAINS_MAX = 1024;

export interface X509AuthenticatorOptions {
  readonly roots: CertificatePool;
  /** Milliseconds since the epoch; Date.now by default. */
  readonly now?: () => number;
}

export class X509Authenticator implements RequestAuthenticator {
  readonly name = 'x509';
  private readonly now: () => number;
  /** Chain digest → the user and the first moment the chain stops being valid (insertion order is the eviction order). */
  private readonly verified = new Map<string, { user: UserInfo | undefined; validFromMs: number; expiresMs: number }>();

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
    const nowMs = this.now();
    const digest = createHash('sha256');
    for (const certificate of presented) digest.update(certificate.raw);
    const key = digest.digest('base64');
    const known = this.verified.get(key);
    if (known !== undefined && nowMs >= known.validFromMs && nowMs < known.expiresMs) {
      return known.user === undefined ? NOT_MINE : { outcome: 'authenticated', user: known.user };
    }
    if (known !== undefined) this.verified.delete(key);
    const verification = verifyCertificateChain(presented, { roots: this.options.roots, nowMs });
    if (!verification.ok) return authenticationFailed(`verifying certificate ${certificateIdentifier(presented[0])} failed: ${verification.reason}`);
    const chain = verification.chains[0];
    const leaf = chain[0].fields;
    const user = leaf.commonName === '' ? undefined : { name: leaf.commonName, uid: '', groups: [...leaf.organizations], extra: {} };
    if (this.verified.size >= VERIFIED_CHAINS_MAX) this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(key, {
      user,
      validFromMs: Math.max(...chain.map((link) => Date.parse(link.certificate.validFrom))),
      expiresMs: Math.min(...chain.map((link) => Date.parse(link.certificate.validTo))),
    });
    return user === undefined ? NOT_MINE : { outcome: 'authenticated', user };
  }
}
