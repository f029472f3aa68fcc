/**
 * The bootstrap signer (kube-controller-manager v1.25 `bootstrapsigner`,
 * pkg/controller/bootstrap/bootstrapsigner.go and k8s.io/cluster-bootstrap token/jws; spec 02
 * §2.2, §5.5): the `cluster-info` ConfigMap in kube-public carries, beside its `kubeconfig`, one
 * `jws-kubeconfig-<token id>` entry per bootstrap token that may sign (type
 * bootstrap.kubernetes.io/token in kube-system, `usage-bootstrap-signing: "true"`, well-formed,
 * not expired). Each is a detached JWS (RFC 7515 appendix F) of the kubeconfig text: HS256 keyed
 * with the whole token `<id>.<secret>`, protected header `{"alg":"HS256","kid":"<id>"}` exactly
 * as go-jose writes it (kubeadm join recomputes the signature and compares the strings), the
 * payload left out between the two dots.
 *
 * Any change to the ConfigMap or to a token Secret recomputes the signatures; the ConfigMap is
 * written only when they differ (stale ones dropped), through a read-modify-write on the stored
 * object as `system:serviceaccount:kube-system:bootstrap-signer`, on the condition that it is
 * still the version the signatures were computed from (kube's Update with the cached
 * resourceVersion; a conflict is dropped, the newer version triggers a new pass). A token's expiry is a change
 * too: the signer looks again when the next signing token expires, so its signature goes even
 * when the token cleaner is off.
 */
import { createHmac } from 'node:crypto';
import { FeedMirror, type ObjectFeed } from '../authz';
import type { GenericRegistry } from '../registry';
import type { ServedResource } from '../registry';
import { ApiError } from '../util';
import { TOKEN_SECRETS_PREFIX, expirationOf, isBootstrapTokenSecret, signingToken } from './bootstrap-token-secret';
import { controllerServiceAccount } from './csr-status';
import { WorkQueue } from './work-queue';
import type { JsonObject } from '../apis/object';
import { resourceKeyPrefix } from '../apis/catalogue';

export const CLUSTER_INFO_NAMESPACE = 'kube-public';
export const CLUSTER_INFO_NAME = 'cluster-info';
export const KUBECONFIG_KEY = 'kubeconfig';
export const JWS_SIGNATURE_KEY_PREFIX = 'jws-kubeconfig-';
export const BOOTSTRAP_SIGNER_USER = controllerServiceAccount('bootstrap-signer');

const CLUSTER_INFO_KEY = `${CLUSTER_INFO_NAMESPACE}/${CLUSTER_INFO_NAME}`;

/** ComputeDetachedSignature: `<base64url header>..<base64url HMAC-SHA256>`. */
export function computeDetachedSignature(content: string, tokenId: string, tokenSecret: string): string {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', kid: tokenId })).toString('base64url');
  const payload = Buffer.from(content, 'utf8').toString('base64url');
  const mac = createHmac('sha256', `${tokenId}.${tokenSecret}`).update(`${header}.${payload}`).digest('base64url');
  return `${header}..${mac}`;
}

export interface BootstrapSignerOptions {
  readonly registry: Pick<GenericRegistry, 'guaranteedUpdate'>;
  readonly configMaps: ServedResource;
  readonly feed: ObjectFeed;
  readonly now?: () => number;
  readonly log?: (line: string) => void;
  readonly retryBaseMs?: number;
}

function dataOf(configMap: JsonObject): Record<string, string> {
  const data = configMap.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return {};
  return Object.fromEntries(Object.entries(data).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

export class BootstrapSigner {
  private readonly secrets: FeedMirror<JsonObject>;
  private readonly configMaps: FeedMirror<JsonObject>;
  private readonly queue: WorkQueue;
  private readonly now: () => number;

  constructor(private readonly options: BootstrapSignerOptions) {
    this.now = options.now ?? Date.now;
    this.queue = new WorkQueue({ name: 'bootstrapsigner', handle: () => this.sync().then(() => undefined), log: options.log, retryBaseMs: options.retryBaseMs });
    const poke = () => this.queue.add(CLUSTER_INFO_KEY);
    this.secrets = new FeedMirror(options.feed, TOKEN_SECRETS_PREFIX, {
      convert: (object) => object,
      onChange: (changes) => {
        if (changes.some((c) => [c.current, c.previous].some((s) => s !== undefined && isBootstrapTokenSecret(s)))) poke();
      },
      log: options.log,
    });
    this.configMaps = new FeedMirror(options.feed, `${resourceKeyPrefix({ group: '', resource: 'configmaps' })}${CLUSTER_INFO_NAMESPACE}/`, {
      convert: (object) => object,
      onChange: (changes) => {
        if (changes.some((c) => c.key === CLUSTER_INFO_KEY && c.current !== undefined)) poke();
      },
      log: options.log,
    });
  }

  start(): void {
    this.secrets.start();
    this.configMaps.start();
  }

  stop(): void {
    this.secrets.stop();
    this.configMaps.stop();
    this.queue.stop();
  }

  get isIdle(): boolean {
    return this.queue.isIdle;
  }

  /** token id → token, for every Secret that may sign now; schedules a look at the next expiry. */
  private signingTokens(now: number): Map<string, string> {
    const tokens = new Map<string, string>();
    let nextExpiry: number | undefined;
    for (const secret of this.secrets.values()) {
      if (!isBootstrapTokenSecret(secret)) continue;
      const found = signingToken(secret, now);
      if (!found.ok) continue;
      // Two Secrets for one id cannot happen (the name carries the id); keep the first, as kube does.
      if (tokens.has(found.id)) continue;
      tokens.set(found.id, found.token);
      const expiration = expirationOf(secret, now);
      if (expiration.kind === 'at' && (nextExpiry === undefined || expiration.atMs < nextExpiry)) nextExpiry = expiration.atMs;
    }
    if (nextExpiry !== undefined) this.queue.addAfter(CLUSTER_INFO_KEY, nextExpiry - now + 1000);
    return tokens;
  }

  /** signConfigMap: the data cluster-info should hold, or undefined when it already does (or has no kubeconfig). */
  signedData(configMap: JsonObject, tokens: ReadonlyMap<string, string>): Record<string, string> | undefined {
    const data = dataOf(configMap);
    const content = data[KUBECONFIG_KEY];
    if (content === undefined) return undefined;
    const next: Record<string, string> = {};
    let changed = false;
    for (const [key, value] of Object.entries(data)) {
      if (!key.startsWith(JWS_SIGNATURE_KEY_PREFIX)) next[key] = value;
    }
    for (const [id, token] of tokens) {
      const signature = computeDetachedSignature(content, id, token.slice(id.length + 1));
      if (data[JWS_SIGNATURE_KEY_PREFIX + id] !== signature) changed = true;
      next[JWS_SIGNATURE_KEY_PREFIX + id] = signature;
    }
    for (const key of Object.keys(data)) {
      if (key.startsWith(JWS_SIGNATURE_KEY_PREFIX) && !tokens.has(key.slice(JWS_SIGNATURE_KEY_PREFIX.length))) changed = true;
    }
    return changed ? next : undefined;
  }

  /** Brings cluster-info's signatures up to date; true when it wrote. */
  async sync(): Promise<boolean> {
    const cached = this.configMaps.get(CLUSTER_INFO_KEY);
    if (cached === undefined) return false;
    const tokens = this.signingTokens(this.now());
    if (this.signedData(cached, tokens) === undefined) return false;
    let wrote = false;
    // The signatures were computed from this version and these tokens: a write over a newer version
    // (another replica's, after a hand-over) fails, and that newer version brings this signer back here.
    const preconditionRv = String((cached.metadata as JsonObject | undefined)?.resourceVersion ?? '');
    try {
      await this.options.registry.guaranteedUpdate(this.options.configMaps, CLUSTER_INFO_NAMESPACE, CLUSTER_INFO_NAME, (current) => {
        const data = this.signedData(current, tokens);
        wrote = data !== undefined;
        if (data !== undefined) current.data = data;
        return current;
      }, { dryRun: false, subresource: '', user: BOOTSTRAP_SIGNER_USER, preconditionRv: preconditionRv === '' ? undefined : preconditionRv });
    } catch (err) {
      if (err instanceof ApiError && (err.code === 404 || err.code === 409)) return false;
      throw err;
    }
    if (wrote) this.options.log?.(`bootstrapsigner: ${CLUSTER_INFO_KEY} signed for ${tokens.size} token(s)${tokens.size > 0 ? `: ${[...tokens.keys()].sort().join(', ')}` : ''}`);
    return wrote;
  }
}
