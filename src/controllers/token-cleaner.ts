/**
 * The token cleaner (kube-controller-manager v1.25 `tokencleaner`,
 * pkg/controller/bootstrap/tokencleaner.go; spec 02 §3, §5.5): a bootstrap token Secret (type
 * bootstrap.kubernetes.io/token in kube-system) whose `expiration` has passed, or does not parse,
 * is deleted; one that expires later is looked at again then. The delete carries the Secret's
 * uid as a precondition, so a token re-created under the same name meanwhile stays; a Secret
 * already gone is not an error. It writes as `system:serviceaccount:kube-system:token-cleaner`,
 * the identity v1.25's default RBAC lets delete Secrets in kube-system.
 */
import type { ObjectFeed } from '../authz';
import type { GenericRegistry } from '../registry';
import type { ServedResource } from '../registry';
import { ApiError } from '../util';
import { TOKEN_NAMESPACE, TOKEN_SECRETS_PREFIX, expirationOf, isBootstrapTokenSecret } from './bootstrap-token-secret';
import { controllerServiceAccount } from './csr-status';
import { MirroredController } from './mirrored-controller';
import type { JsonObject } from '../apis/object';

export const TOKEN_CLEANER_USER = controllerServiceAccount('token-cleaner');

export interface TokenCleanerOptions {
  readonly registry: Pick<GenericRegistry, 'delete'>;
  readonly secrets: ServedResource;
  readonly feed: ObjectFeed;
  readonly now?: () => number;
  readonly log?: (line: string) => void;
  readonly retryBaseMs?: number;
}

export type CleanOutcome = 'deleted' | 'scheduled' | 'kept';

export class TokenCleaner extends MirroredController {
  private readonly now: () => number;

  constructor(private readonly options: TokenCleanerOptions) {
    super({ feed: options.feed, prefix: TOKEN_SECRETS_PREFIX, queue: { name: 'tokencleaner', log: options.log, retryBaseMs: options.retryBaseMs } });
    this.now = options.now ?? Date.now;
  }

  protected wants(secret: JsonObject): boolean {
    return isBootstrapTokenSecret(secret);
  }

  protected handle(key: string): Promise<void> {
    return this.sync(key).then(() => undefined);
  }

  /** evalSecret for `key` (`kube-system/<name>`). */
  async sync(key: string): Promise<CleanOutcome> {
    const secret = this.mirror.get(key);
    if (secret === undefined || !isBootstrapTokenSecret(secret)) return 'kept';
    const now = this.now();
    const expiration = expirationOf(secret, now);
    if (expiration.kind === 'never') return 'kept';
    if (expiration.kind === 'at') {
      this.queue.addAfter(key, expiration.atMs - now + 1);
      return 'scheduled';
    }
    const metadata = (secret.metadata ?? {}) as JsonObject;
    const name = String(metadata.name ?? '');
    try {
      await this.options.registry.delete(this.options.secrets, TOKEN_NAMESPACE, name, {
        dryRun: false,
        preconditions: typeof metadata.uid === 'string' ? { uid: metadata.uid } : undefined,
        user: TOKEN_CLEANER_USER,
      });
    } catch (err) {
      // NotFound: deleted already; Conflict: the uid precondition failed (a new token of that name).
      if (err instanceof ApiError && (err.code === 404 || err.code === 409)) return 'kept';
      throw err;
    }
    this.options.log?.(`tokencleaner: deleted expired bootstrap token Secret ${TOKEN_NAMESPACE}/${name}`);
    return 'deleted';
  }
}
