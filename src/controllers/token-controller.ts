/**
 * The legacy token controller (kube-controller-manager's "serviceaccount-token",
 * pkg/controller/serviceaccount/tokens_controller.go, v1.25; spec 02 §2.1, §5.4 point 2):
 * Secrets of type kubernetes.io/service-account-token naming an account (annotation
 * kubernetes.io/service-account.name) are filled with `token` (a legacy service-account JWT
 * signed with the cluster's service-account key), `ca.crt` (the cluster CA) and `namespace`,
 * and annotated with the account's uid; a token Secret whose account does not exist (or is
 * another account of the same name: the uid annotation differs) is deleted, and an account's
 * token Secrets are deleted with it. As in v1.25 (LegacyServiceAccountTokenNoAutoGeneration),
 * no token Secret is created for new accounts: users create them.
 *
 * Reads come from the watch cache; a missing account is confirmed by a quorum read before its
 * Secret is deleted, and a Secret is written only over the version the cache showed (a newer
 * one brings its own event). No token appears in a log line.
 */
import type { ServiceAccountTokenSigner } from '../authn';
import { ApiError } from '../util';
import type { GenericRegistry, ServedResource } from '../registry';
import type { WatchCache } from '../storage';
import { InformedController } from './informed-controller';
import { annotationsOf, deepCopy, type JsonObject, metadataOf } from '../apis/object';
import { resourceKeyPrefix } from '../apis/catalogue';

export const TOKEN_SECRET_TYPE = 'kubernetes.io/service-account-token';
export const ACCOUNT_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
export const ACCOUNT_UID_ANNOTATION = 'kubernetes.io/service-account.uid';
const SECRETS = resourceKeyPrefix({ group: '', resource: 'secrets' });
const SERVICE_ACCOUNTS = resourceKeyPrefix({ group: '', resource: 'serviceaccounts' });

export interface TokenControllerOptions {
  registry: GenericRegistry;
  cache: WatchCache;
  secrets: ServedResource;
  serviceAccounts: ServedResource;
  signer: Pick<ServiceAccountTokenSigner, 'issueLegacyToken'>;
  /** The cluster CA certificate(s), PEM, for each Secret's ca.crt. */
  rootCaPem: string;
  log?: (line: string) => void;
  resyncMs?: number;
}

function isTokenSecret(secret: JsonObject): boolean {
  return secret.type === TOKEN_SECRET_TYPE;
}

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

export class TokenController extends InformedController {
  /** Accounts deleted lately, by "namespace/name", with their uid: their Secrets go too. */
  private readonly deletedAccounts = new Map<string, string>();

  constructor(private readonly options: TokenControllerOptions) {
    super({ cache: options.cache, queue: { name: 'serviceaccount-token controller', log: options.log }, resyncMs: options.resyncMs ?? 60_000 });
    this.inform(SECRETS, (type, secret) => {
      if (type !== 'DELETED' && isTokenSecret(secret)) this.queue.add(`secret:${String(metadataOf(secret).namespace)}/${String(metadataOf(secret).name)}`);
    });
    this.inform(SERVICE_ACCOUNTS, (type, account) => {
      if (type !== 'DELETED') return;
      const key = `${String(metadataOf(account).namespace)}/${String(metadataOf(account).name)}`;
      this.deletedAccounts.set(key, String(metadataOf(account).uid ?? ''));
      this.queue.add(`account:${key}`);
    });
  }

  protected resync(): void {
    if (!this.options.cache.isReady) return;
    for (const secret of this.options.cache.list(SECRETS).items) {
      if (isTokenSecret(secret)) this.queue.add(`secret:${String(metadataOf(secret).namespace)}/${String(metadataOf(secret).name)}`);
    }
  }

  protected async handle(key: string): Promise<boolean> {
    const colon = key.indexOf(':');
    const kind = key.slice(0, colon);
    const rest = key.slice(colon + 1);
    const slash = rest.indexOf('/');
    const namespace = rest.slice(0, slash);
    const name = rest.slice(slash + 1);
    return kind === 'account' ? this.syncDeletedAccount(namespace, name) : this.syncSecret(namespace, name);
  }

  /** Deletes the token Secrets of a deleted account. */
  private async syncDeletedAccount(namespace: string, name: string): Promise<boolean> {
    const uid = this.deletedAccounts.get(`${namespace}/${name}`) ?? '';
    for (const secret of this.options.cache.list(`${SECRETS}${namespace}/`).items) {
      if (!isTokenSecret(secret)) continue;
      const annotations = annotationsOf(secret);
      if (annotations[ACCOUNT_NAME_ANNOTATION] !== name) continue;
      const secretUid = annotations[ACCOUNT_UID_ANNOTATION] ?? '';
      if (secretUid !== '' && uid !== '' && secretUid !== uid) continue;
      await this.deleteSecret(namespace, String(metadataOf(secret).name), String(metadataOf(secret).uid ?? ''));
    }
    this.deletedAccounts.delete(`${namespace}/${name}`);
    return true;
  }

  private async deleteSecret(namespace: string, name: string, uid: string): Promise<void> {
    try {
      await this.options.registry.delete(this.options.secrets, namespace, name, { dryRun: false, preconditions: uid === '' ? undefined : { uid } });
    } catch (err) {
      if (err instanceof ApiError && (err.code === 404 || err.code === 409)) return;
      throw err;
    }
  }

  /** The account a Secret refers to, from the cache, confirmed by a quorum read when the cache has none. */
  private async accountOf(namespace: string, name: string, uid: string): Promise<JsonObject | undefined> {
    let account = this.options.cache.get(`${SERVICE_ACCOUNTS}${namespace}/${name}`);
    if (account === undefined) {
      try {
        account = await this.options.registry.get(this.options.serviceAccounts, namespace, name, null);
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 404)) throw err;
        return undefined;
      }
    }
    if (uid !== '' && String(metadataOf(account).uid ?? '') !== uid) return undefined;
    return account;
  }

  async syncSecret(namespace: string, name: string): Promise<boolean> {
    const { cache, registry, secrets, signer, rootCaPem } = this.options;
    const cached = cache.get(`${SECRETS}${namespace}/${name}`);
    if (cached === undefined || !isTokenSecret(cached)) return true;
    const annotations = annotationsOf(cached);
    const accountName = annotations[ACCOUNT_NAME_ANNOTATION] ?? '';
    const account = accountName === '' ? undefined : await this.accountOf(namespace, accountName, annotations[ACCOUNT_UID_ANNOTATION] ?? '');
    if (account === undefined) {
      await this.deleteSecret(namespace, name, String(metadataOf(cached).uid ?? ''));
      return true;
    }
    const data = (cached.data ?? {}) as Record<string, string>;
    const caData = b64(rootCaPem);
    const needsCa = rootCaPem !== '' && data['ca.crt'] !== caData;
    const needsNamespace = (data.namespace ?? '') === '';
    const needsToken = (data.token ?? '') === '';
    const accountUid = String(metadataOf(account).uid ?? '');
    if (!needsCa && !needsNamespace && !needsToken && annotations[ACCOUNT_UID_ANNOTATION] === accountUid) return true;
    const next: JsonObject = deepCopy(cached);
    const nextData = { ...data };
    if (needsCa) nextData['ca.crt'] = caData;
    if (needsNamespace) nextData.namespace = b64(namespace);
    if (needsToken) nextData.token = b64(await signer.issueLegacyToken({ namespace, serviceAccountName: accountName, serviceAccountUid: accountUid, secretName: name }));
    next.data = nextData;
    next.metadata = { ...metadataOf(next), annotations: { ...annotations, [ACCOUNT_NAME_ANNOTATION]: accountName, [ACCOUNT_UID_ANNOTATION]: accountUid } };
    try {
      // Written over the cached version only: a newer one was written by someone else and brings its own event.
      await registry.update(secrets, namespace, name, next, { dryRun: false, subresource: '', fieldManager: 'kube-controller-manager' });
    } catch (err) {
      if (err instanceof ApiError && (err.code === 409 || err.code === 404)) return true;
      throw err;
    }
    return true;
  }
}
