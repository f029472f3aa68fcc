/**
 * The CSR approving controller (kube-controller-manager v1.25 `csrapproving`,
 * pkg/controller/certificates/approver/sarapprove.go; spec 02 §3 "Built-in signer
 * auto-approval"): a pending request for `kubernetes.io/kube-apiserver-client-kubelet` that is a
 * kubelet client request (O system:nodes, CN system:node:*, no SAN, the three usages) is approved
 * when a SubjectAccessReview for its requester allows
 *
 * - `create` on `certificatesigningrequests/selfnodeclient` (group certificates.k8s.io), when the
 *   requester is the node itself (spec.username equals the subject's CN): a node renewing;
 * - else `create` on `certificatesigningrequests/nodeclient`: a bootstrapper asking for a node.
 *
 * The approval is the condition Approved, reason `AutoApproved`, with kube's messages, written
 * through the approval subresource as `system:serviceaccount:kube-system:certificate-controller`.
 * A request the review does not allow is looked at again with backoff (RBAC may allow it later),
 * without a log line per attempt; requests already approved, denied or issued are left alone.
 * The review is asked of the API server's authorizer chain in process, as a SubjectAccessReview
 * create would be.
 */
import type { CertificateRequest } from '../apis/validation';
import type { UserInfo } from '../authn';
import type { AuthorizationAttributes, AuthorizationResult } from '../authz';
import type { ObjectFeed } from '../authz';
import { KUBE_APISERVER_CLIENT_KUBELET_SIGNER, kubeletClientRequestError } from '../certificates';
import type { GenericRegistry } from '../registry';
import type { ServedResource } from '../registry';
import { ApiError } from '../util';
import { CERTIFICATE_CONTROLLER_USER, CSR_KEY_PREFIX, appendCondition, approvalState, csrSpec, issuedCertificate, parsedRequestOf, signerNameOf, timestamp, usagesOf } from './csr-status';
import { MirroredController } from './mirrored-controller';
import type { JsonObject } from '../apis/object';

export interface CsrApprovingControllerOptions {
  readonly registry: Pick<GenericRegistry, 'guaranteedUpdate'>;
  readonly csrs: ServedResource;
  readonly feed: ObjectFeed;
  /** The API server's authorizer chain (what a SubjectAccessReview asks). */
  readonly authorize: (attributes: AuthorizationAttributes) => Promise<AuthorizationResult>;
  readonly now?: () => number;
  readonly log?: (line: string) => void;
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
}

export type ApprovalOutcome = 'approved' | 'not-allowed' | 'skipped';

interface Recognizer {
  readonly subresource: 'selfnodeclient' | 'nodeclient';
  readonly message: string;
  readonly recognize: (csr: JsonObject, request: CertificateRequest) => boolean;
}

/** A "not yet": the review did not allow; retried quietly. */
class NotAllowedYet extends Error {
  readonly code = 'NOT_ALLOWED_YET';
}

function isNodeClientRequest(csr: JsonObject, request: CertificateRequest): boolean {
  return signerNameOf(csr) === KUBE_APISERVER_CLIENT_KUBELET_SIGNER && kubeletClientRequestError(request, usagesOf(csr)) === undefined;
}

const RECOGNIZERS: readonly Recognizer[] = [
  {
    subresource: 'selfnodeclient',
    message: 'Auto approving self kubelet client certificate after SubjectAccessReview.',
    recognize: (csr, request) => csrSpec(csr).username === request.subject.commonName && isNodeClientRequest(csr, request),
  },
  {
    subresource: 'nodeclient',
    message: 'Auto approving kubelet client certificate after SubjectAccessReview.',
    recognize: isNodeClientRequest,
  },
];

/** Pending: no certificate, neither approved nor denied. */
function isPending(csr: JsonObject): boolean {
  const { approved, denied } = approvalState(csr);
  return !approved && !denied && issuedCertificate(csr).length === 0;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** The requester as the CSR recorded it (spec.username, uid, groups, extra). */
export function requesterOf(csr: JsonObject): UserInfo {
  const spec = csrSpec(csr);
  const extra: Record<string, string[]> = {};
  const recorded = spec.extra;
  if (typeof recorded === 'object' && recorded !== null && !Array.isArray(recorded)) {
    for (const [key, values] of Object.entries(recorded)) extra[key] = strings(values);
  }
  return {
    name: typeof spec.username === 'string' ? spec.username : '',
    uid: typeof spec.uid === 'string' ? spec.uid : '',
    groups: strings(spec.groups),
    extra,
  };
}

export class CsrApprovingController extends MirroredController {
  private readonly now: () => number;

  constructor(private readonly options: CsrApprovingControllerOptions) {
    super({
      feed: options.feed,
      prefix: CSR_KEY_PREFIX,
      queue: {
        name: 'csrapproving',
        isQuiet: (err) => err instanceof NotAllowedYet,
        log: options.log,
        retryBaseMs: options.retryBaseMs ?? 1000,
        retryMaxMs: options.retryMaxMs ?? 60_000,
      },
    });
    this.now = options.now ?? Date.now;
  }

  protected wants(csr: JsonObject): boolean {
    return isPending(csr) && signerNameOf(csr) === KUBE_APISERVER_CLIENT_KUBELET_SIGNER;
  }

  /** A request no SubjectAccessReview allows yet is retried quietly with backoff. */
  protected async handle(name: string): Promise<void> {
    if (await this.sync(name) === 'not-allowed') throw new NotAllowedYet(`${name} was not allowed by a SubjectAccessReview`);
  }

  async sync(name: string): Promise<ApprovalOutcome> {
    const csr = this.mirror.get(name);
    if (csr === undefined || !isPending(csr)) return 'skipped';
    const request = parsedRequestOf(csr, name);
    const requester = requesterOf(csr);
    let tried = false;
    for (const recognizer of RECOGNIZERS) {
      if (!recognizer.recognize(csr, request)) continue;
      tried = true;
      const review = await this.options.authorize({
        user: requester,
        verb: 'create',
        isResourceRequest: true,
        path: '',
        apiGroup: 'certificates.k8s.io',
        apiVersion: '*',
        resource: 'certificatesigningrequests',
        subresource: recognizer.subresource,
        namespace: '',
        name: '',
      });
      if (review.decision !== 'allow') continue;
      return (await this.approve(name, recognizer.message)) ? 'approved' : 'skipped';
    }
    return tried ? 'not-allowed' : 'skipped';
  }

  private async approve(name: string, message: string): Promise<boolean> {
    let changed = false;
    try {
      await this.options.registry.guaranteedUpdate(this.options.csrs, '', name, (current) => {
        changed = isPending(current);
        if (changed) appendCondition(current, { type: 'Approved', status: 'True', reason: 'AutoApproved', message, lastUpdateTime: timestamp(this.now()) });
        return current;
      }, { dryRun: false, subresource: 'approval', user: CERTIFICATE_CONTROLLER_USER });
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return false;
      throw err;
    }
    if (changed) this.options.log?.(`csrapproving: ${name}: ${message}`);
    return changed;
  }
}
