/**
 * The TLS material one end of a mutually authenticated connection holds: the certificate it
 * presents, its key, and the CA bundle the other end's certificate must chain to. The store's
 * two ports use it as etcd does with --client-cert-auth and --peer-client-cert-auth: a client
 * or peer without a certificate from `ca` is refused during the handshake, before any request
 * or Raft message is read.
 *
 * Invariant: nothing here is ever logged or put in an error message; keys are PEM strings held
 * in memory only.
 */

export interface MutualTls {
  /** PEM certificates (one or more) of the CA that the other end's certificate must chain to. */
  ca: string;
  /** PEM certificate presented to the other end (with intermediates, if any). */
  cert: string;
  /** PEM private key of `cert`. */
  key: string;
}

/** True when all three parts are present and look like PEM (a cheap check, not a parse). */
export function isMutualTls(value: Partial<MutualTls> | undefined): value is MutualTls {
  return value !== undefined && [value.ca, value.cert, value.key].every((pem) => typeof pem === 'string' && pem.includes('-----BEGIN '));
}
