/**
 * The CSR signing controller (kube-controller-manager v1.25 `csrsigning`,
 * pkg/controller/certificates/signer; spec 02 §2.3, §3): for each built-in signer with a CA,
 * an approved request that is neither failed nor issued, and names that signer, gets
 *
 * - its certificate in status.certificate (through the status subresource), when the request
 *   meets the signer's rule (src/certificates/csr-signer.ts);
 * - else a `Failed` condition, reason `SignerValidationFailure`, with the rule's message.
 *
 * Requests for other signers, or for a built-in signer without a CA (per-signer CA files were
 * given for the others only), are left alone. It follows the watch cache's CSRs; each write is a
 * read-modify-write that checks again, on the stored object, that the request still wants
 * signing, so a write racing another replica's (a lease hand-over) or an approval change does
 * nothing twice. A CA that cannot sign now (expired) is logged and retried with backoff, as
 * kube only logs signing errors.
 */
import type { ObjectFeed } from '../authz';
import { SIGNER_RULES, describeRequest, isBuiltInSignerName, issueCertificate, type SigningAuthority } from '../certificates';
import type { GenericRegistry } from '../registry';
import type { ServedResource } from '../registry';
import { ApiError } from '../util';
import {
  CERTIFICATE_CONTROLLER_USER,
  CSR_KEY_PREFIX,
  appendCondition,
  csrSpec,
  hasTrueCondition,
  isApproved,
  issuedCertificate,
  parsedRequestOf,
  signerNameOf,
  timestamp,
  usagesOf,
} from './csr-status';
import { MirroredController } from './mirrored-controller';
import type { JsonObject } from '../apis/object';

export interface CsrSigningControllerOptions {
  readonly registry: Pick<GenericRegistry, 'guaranteedUpdate'>;
  readonly csrs: ServedResource;
  readonly feed: ObjectFeed;
  /** The CA of each built-in signer that signs (by signer name). */
  readonly authorities: ReadonlyMap<string, SigningAuthority>;
  /** --cluster-signing-duration. */
  readonly maxDurationMs: number;
  readonly now?: () => number;
  readonly log?: (line: string) => void;
  readonly retryBaseMs?: number;
}

export type SigningOutcome = 'signed' | 'failed' | 'skipped';

/** Whether `csr` waits for a certificate from one of `authorities`. */
function wantsSigning(csr: JsonObject, authorities: ReadonlyMap<string, SigningAuthority>): boolean {
  return isApproved(csr) && !hasTrueCondition(csr, 'Failed') && issuedCertificate(csr).length === 0 && authorities.has(signerNameOf(csr));
}

export class CsrSigningController extends MirroredController {
  private readonly now: () => number;

  constructor(private readonly options: CsrSigningControllerOptions) {
    super({ feed: options.feed, prefix: CSR_KEY_PREFIX, queue: { name: 'csrsigning', log: options.log, retryBaseMs: options.retryBaseMs } });
    this.now = options.now ?? Date.now;
  }

  protected wants(csr: JsonObject): boolean {
    return wantsSigning(csr, this.options.authorities);
  }

  protected handle(name: string): Promise<void> {
    return this.sync(name).then(() => undefined);
  }

  /** Handles one request by name; what it did. */
  async sync(name: string): Promise<SigningOutcome> {
    const csr = this.mirror.get(name);
    if (csr === undefined || !wantsSigning(csr, this.options.authorities)) return 'skipped';
    const signerName = signerNameOf(csr);
    const authority = this.options.authorities.get(signerName) as SigningAuthority;
    const request = parsedRequestOf(csr, name);
    const usages = usagesOf(csr);
    const refusal = isBuiltInSignerName(signerName) ? SIGNER_RULES[signerName](request, usages) : undefined;
    if (refusal !== undefined) {
      const written = await this.write(name, (current) => {
        appendCondition(current, { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: refusal, lastUpdateTime: timestamp(this.now()) });
      });
      if (written) this.options.log?.(`csrsigning: ${name}: refused for ${signerName}: ${refusal}`);
      return written ? 'failed' : 'skipped';
    }
    const expirationSeconds = csrSpec(csr).expirationSeconds;
    const pem = issueCertificate(authority, request, usages, {
      maxDurationMs: this.options.maxDurationMs,
      expirationSeconds: typeof expirationSeconds === 'number' ? expirationSeconds : undefined,
      now: new Date(this.now()),
    });
    const written = await this.write(name, (current) => {
      current.status = { ...((current.status as JsonObject | undefined) ?? {}), certificate: Buffer.from(pem).toString('base64') };
    });
    if (written) this.options.log?.(`csrsigning: ${name}: signed by ${signerName} for ${describeRequest(request)}`);
    return written ? 'signed' : 'skipped';
  }

  /** Applies `change` through the status subresource if the stored request still wants signing; false when it no longer does. */
  private async write(name: string, change: (current: JsonObject) => void): Promise<boolean> {
    let changed = false;
    try {
      await this.options.registry.guaranteedUpdate(this.options.csrs, '', name, (current) => {
        changed = wantsSigning(current, this.options.authorities);
        if (changed) change(current);
        return current;
      }, { dryRun: false, subresource: 'status', user: CERTIFICATE_CONTROLLER_USER });
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return false;
      throw err;
    }
    return changed;
  }
}
