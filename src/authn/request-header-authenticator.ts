/**
 * The authenticating proxy (spec 02 §5.6; `--requestheader-*` flags; apiserver
 * pkg/authentication/request/headerrequest/requestheader.go behind
 * pkg/authentication/request/x509's CA verifier).
 *
 * The identity headers count only when the client presented a certificate that verifies against
 * the requestheader CA for client auth and, when `--requestheader-allowed-names` is set, whose
 * CN is one of those names:
 * - no certificate: not mine;
 * - a certificate that does not verify, or a CN not allowed: failed (an ordinary client
 *   certificate signed by the cluster CA lands here too; the union then lets the x509
 *   authenticator try it, as kube-apiserver's union does);
 * - verified, but no username header with a value: not mine;
 * - otherwise: user = the first username header (in flag order) with a value; groups = every
 *   value of every group header, in flag order, empty values skipped, commas not split; extra =
 *   for each header starting with an extra prefix (case-insensitive), key = the rest lower-cased
 *   and percent-decoded (kept as is when the escape is malformed), values appended in prefix
 *   order.
 *
 * `stripAuthenticationHeaders` removes these headers, and `Authorization`, from a request's
 * header map; the authentication filter applies it to every request after authenticating, so a
 * client can never hand them to a later stage (or to a proxied backend) itself.
 */
import type { AuthenticationRequest, AuthenticationResult, RequestAuthenticator } from './authenticator';
import { NOT_MINE, authenticationFailed } from './authenticator';
import { AuthnError } from './errors';
import { headerValues, pathUnescape, withoutHeaders, type HeaderMap } from './headers';
import { verifyCertificateChain, type CertificatePool } from './x509-verifier';

export interface RequestHeaderOptions {
  /** --requestheader-client-ca-file. */
  readonly clientCa: CertificatePool;
  /** --requestheader-allowed-names; empty allows any CN. */
  readonly allowedNames?: readonly string[];
  /** --requestheader-username-headers; required, at least one. */
  readonly usernameHeaders: readonly string[];
  /** --requestheader-group-headers. */
  readonly groupHeaders?: readonly string[];
  /** --requestheader-extra-headers-prefix. */
  readonly extraHeaderPrefixes?: readonly string[];
  readonly now?: () => number;
}

/** The header names the proxy speaks in, for stripAuthenticationHeaders. */
export interface RequestHeaderNames {
  readonly usernameHeaders: readonly string[];
  readonly groupHeaders?: readonly string[];
  readonly extraHeaderPrefixes?: readonly string[];
}

export class RequestHeaderAuthenticator implements RequestAuthenticator {
  readonly name = 'requestheader';
  private readonly now: () => number;
  private readonly usernameHeaders: readonly string[];
  private readonly groupHeaders: readonly string[];
  private readonly extraPrefixes: readonly string[];

  constructor(private readonly options: RequestHeaderOptions) {
    const usernames = options.usernameHeaders.map((name) => name.trim()).filter((name) => name !== '');
    if (usernames.length === 0) throw new AuthnError('INVALID_OPTIONS', '--requestheader-username-headers: at least one header name is required');
    this.usernameHeaders = usernames.map((name) => name.toLowerCase());
    this.groupHeaders = (options.groupHeaders ?? []).map((name) => name.trim().toLowerCase()).filter((name) => name !== '');
    this.extraPrefixes = (options.extraHeaderPrefixes ?? []).map((name) => name.trim().toLowerCase()).filter((name) => name !== '');
    this.now = options.now ?? Date.now;
  }

  /** The names this authenticator reads, for stripAuthenticationHeaders. */
  get headerNames(): RequestHeaderNames {
    return { usernameHeaders: this.usernameHeaders, groupHeaders: this.groupHeaders, extraHeaderPrefixes: this.extraPrefixes };
  }

  async authenticate(request: AuthenticationRequest): Promise<AuthenticationResult> {
    const presented = request.peerCertificates;
    if (presented.length === 0) return NOT_MINE;
    const verification = verifyCertificateChain(presented, { roots: this.options.clientCa, nowMs: this.now() });
    if (!verification.ok) return authenticationFailed(verification.reason);
    const allowed = this.options.allowedNames ?? [];
    const commonName = verification.chains[0][0].fields.commonName;
    if (allowed.length > 0 && !allowed.includes(commonName)) {
      return authenticationFailed(`x509: subject with cn=${commonName} is not in the allowed list`);
    }
    return this.fromHeaders(request.headers);
  }

  private fromHeaders(headers: HeaderMap): AuthenticationResult {
    let name = '';
    for (const header of this.usernameHeaders) {
      const first = headerValues(headers, header)[0] ?? '';
      if (first !== '') {
        name = first;
        break;
      }
    }
    if (name === '') return NOT_MINE;
    const groups: string[] = [];
    for (const header of this.groupHeaders) {
      for (const value of headerValues(headers, header)) if (value !== '') groups.push(value);
    }
    const extra: Record<string, string[]> = {};
    for (const prefix of this.extraPrefixes) {
      for (const [header, value] of Object.entries(headers)) {
        if (value === undefined || !header.toLowerCase().startsWith(prefix)) continue;
        const encoded = header.slice(prefix.length).toLowerCase();
        const key = pathUnescape(encoded) ?? encoded;
        (extra[key] ??= []).push(...(typeof value === 'string' ? [value] : value));
      }
    }
    return { outcome: 'authenticated', user: { name, uid: '', groups, extra } };
  }
}

/**
 * `headers` without `Authorization` and without the authenticating proxy's headers: the
 * configured username and group headers and every header starting with an extra prefix
 * (case-insensitive). With no proxy configured only `Authorization` goes.
 */
export function stripAuthenticationHeaders<T extends string | readonly string[] | undefined>(
  headers: Readonly<Record<string, T>>,
  names: RequestHeaderNames | undefined,
): Record<string, T> {
  const exact = new Set<string>(['authorization']);
  const prefixes: string[] = [];
  if (names !== undefined) {
    for (const name of names.usernameHeaders) exact.add(name.toLowerCase());
    for (const name of names.groupHeaders ?? []) exact.add(name.toLowerCase());
    for (const prefix of names.extraHeaderPrefixes ?? []) prefixes.push(prefix.toLowerCase());
  }
  return withoutHeaders(headers, (name) => exact.has(name) || prefixes.some((prefix) => prefix !== '' && name.startsWith(prefix)));
}
