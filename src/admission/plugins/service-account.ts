/**
 * ServiceAccount (default on; kubernetes plugin/pkg/admission/serviceaccount, spec 02 §2.1,
 * §5.4). On pod creation:
 * - no serviceAccountName: `default` (the deprecated `serviceAccount` field is honoured as an
 *   alias and mirrored, as v1 conversion does);
 * - the account must exist, else 403 `error looking up service account NS/NAME: serviceaccount
 *   "NAME" not found` (the `default` account is waited for a little: its controller creates it
 *   right after the namespace);
 * - unless the pod or the account sets automountServiceAccountToken false, a projected volume
 *   `kube-api-access-<5 random>` (a 3607 s bound token at `token`, kube-root-ca.crt's ca.crt, the
 *   namespace from the downward API; defaultMode 420) mounted read-only at
 *   /var/run/secrets/kubernetes.io/serviceaccount in every container and init container that
 *   has nothing mounted there;
 * - no imagePullSecrets: the account's;
 * - an account annotated kubernetes.io/enforce-mountable-secrets=true limits the secrets the pod
 *   may use to the account's.
 * Mirror pods (kubernetes.io/config.mirror) are not changed and may reference no account, secret
 * or token projection.
 */
import { randomBytes } from 'node:crypto';
import type { AdmissionAttributes } from '../admission-chain';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { admissionForbidden, arrayField, ensureSpec, KEY_PREFIX, namespacedKey, objectField, stringField, stringMap } from '../plugin-support';
import { podSecretNames } from '../pod-spec';
import { type JsonObject, metadataOf } from '../../apis/object';

export const DEFAULT_SERVICE_ACCOUNT = 'default';
export const TOKEN_VOLUME_PREFIX = 'kube-api-access-';
export const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
const ENFORCE_MOUNTABLE_SECRETS = 'kubernetes.io/enforce-mountable-secrets';
/** The bound token's lifetime the server extends to a year with a warning (serviceaccount.WarnOnlyBoundTokenExpirationSeconds). */
const TOKEN_EXPIRATION_SECONDS = 3607;
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
/** How often, and how far apart, the `default` account is looked for before the pod is refused. */
const DEFAULT_ACCOUNT_ATTEMPTS = 10;
const DEFAULT_ACCOUNT_RETRY_MS = 150;

/** names.SimpleNameGenerator: the base and five random characters. */
export function generateVolumeName(): string {
  const bytes = randomBytes(5);
  let suffix = '';
  for (const byte of bytes) suffix += NAME_ALPHABET[byte % NAME_ALPHABET.length];
  return TOKEN_VOLUME_PREFIX + suffix;
}

/** The projected volume source of the token volume (serviceaccount.TokenVolumeSource). */
export function tokenVolumeSource(): JsonObject {
  return {
    sources: [
      { serviceAccountToken: { expirationSeconds: TOKEN_EXPIRATION_SECONDS, path: 'token' } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
    defaultMode: 420,
  };
}

function isPodRequest(a: AdmissionAttributes): boolean {
  return a.group === '' && a.resource === 'pods' && a.subresource === '' && a.operation === 'CREATE' && a.object !== undefined;
}

function isMirrorPod(pod: JsonObject): boolean {
  return Object.prototype.hasOwnProperty.call(stringMap(metadataOf(pod), 'annotations'), MIRROR_POD_ANNOTATION);
}

function shouldAutomount(account: JsonObject, spec: JsonObject): boolean {
  if (typeof spec.automountServiceAccountToken === 'boolean') return spec.automountServiceAccountToken;
  if (typeof account.automountServiceAccountToken === 'boolean') return account.automountServiceAccountToken;
  return true;
}

/** Adds the token volume and its mounts (mountServiceAccountToken). */
export function mountServiceAccountToken(spec: JsonObject, volumeName: () => string = generateVolumeName): void {
  const volumes = arrayField(spec, 'volumes');
  const existing = volumes.find((v) => stringField(v, 'name').startsWith(TOKEN_VOLUME_PREFIX));
  const name = existing !== undefined ? stringField(existing, 'name') : volumeName();
  let needsVolume = false;
  for (const kind of ['initContainers', 'containers'] as const) {
    for (const container of arrayField(spec, kind)) {
      const mounts = arrayField(container, 'volumeMounts');
      if (mounts.some((m) => stringField(m, 'mountPath') === TOKEN_MOUNT_PATH)) continue;
      container.volumeMounts = [...mounts, { name, readOnly: true, mountPath: TOKEN_MOUNT_PATH }];
      needsVolume = true;
    }
  }
  if (existing === undefined && needsVolume) spec.volumes = [...volumes, { name, projected: tokenVolumeSource() }];
}

/** limitSecretReferences: the secrets a pod may use when the account enforces mountable secrets. */
function secretReferenceFailure(account: JsonObject, spec: JsonObject): string | undefined {
  const accountName = stringField(metadataOf(account), 'name');
  const mountable = new Set(arrayField(account, 'secrets').map((s) => stringField(s, 'name')));
  for (const volume of arrayField(spec, 'volumes')) {
    const secret = objectField(volume, 'secret');
    if (secret === undefined) continue;
    const secretName = stringField(secret, 'secretName');
    if (!mountable.has(secretName)) return `volume with secret.secretName="${secretName}" is not allowed because service account ${accountName} does not reference that secret`;
  }
  for (const [kind, label] of [['initContainers', 'init container'], ['containers', 'container']] as const) {
    for (const container of arrayField(spec, kind)) {
      for (const env of arrayField(container, 'env')) {
        const ref = objectField(objectField(env, 'valueFrom'), 'secretKeyRef');
        if (ref === undefined || mountable.has(stringField(ref, 'name'))) continue;
        return `${label} ${stringField(container, 'name')} with envVar ${stringField(env, 'name')} referencing secret.secretName="${stringField(ref, 'name')}" is not allowed because service account ${accountName} does not reference that secret`;
      }
    }
  }
  const pullSecrets = new Set(arrayField(account, 'imagePullSecrets').map((s) => stringField(s, 'name')));
  for (const [i, ref] of arrayField(spec, 'imagePullSecrets').entries()) {
    if (!pullSecrets.has(stringField(ref, 'name'))) return `imagePullSecrets[${i}].name="${stringField(ref, 'name')}" is not allowed because service account ${accountName} does not reference that imagePullSecret`;
  }
  return undefined;
}

export const serviceAccountPlugin: AdmissionPluginFactory = (_config, deps) => {
  async function lookUp(a: AdmissionAttributes, name: string): Promise<JsonObject> {
    const key = namespacedKey(KEY_PREFIX.serviceaccounts, a.namespace, name);
    let account = deps.objects.get(key) ?? (await deps.objects.getFresh(key));
    // The default account is made by its controller right after the namespace: wait for it a little.
    for (let attempt = 1; account === undefined && name === DEFAULT_SERVICE_ACCOUNT && attempt < DEFAULT_ACCOUNT_ATTEMPTS; attempt++) {
      await new Promise((r) => setTimeout(r, DEFAULT_ACCOUNT_RETRY_MS));
      account = await deps.objects.getFresh(key);
    }
    if (account === undefined) throw admissionForbidden(a, `error looking up service account ${a.namespace}/${name}: serviceaccount "${name}" not found`);
    return account;
  }

  async function check(a: AdmissionAttributes, pod: JsonObject, spec: JsonObject): Promise<void> {
    if (isMirrorPod(pod)) {
      if (stringField(spec, 'serviceAccountName') !== '') throw admissionForbidden(a, 'a mirror pod may not reference service accounts');
      if (podSecretNames(spec).length > 0) throw admissionForbidden(a, 'a mirror pod may not reference secrets');
      for (const volume of arrayField(spec, 'volumes')) {
        if (arrayField(objectField(volume, 'projected'), 'sources').some((s) => objectField(s, 'serviceAccountToken') !== undefined)) {
          throw admissionForbidden(a, 'a mirror pod may not use ServiceAccountToken volume projections');
        }
      }
      return;
    }
    const account = await lookUp(a, stringField(spec, 'serviceAccountName'));
    if (stringMap(metadataOf(account), 'annotations')[ENFORCE_MOUNTABLE_SECRETS] === 'true') {
      const failure = secretReferenceFailure(account, spec);
      if (failure !== undefined) throw admissionForbidden(a, failure);
    }
  }

  return {
    name: 'ServiceAccount',
    sideEffects: 'None',
    handles: isPodRequest,
    async mutate(a) {
      const pod = a.object as JsonObject;
      const spec = ensureSpec(pod);
      if (isMirrorPod(pod)) {
        await check(a, pod, spec);
        return pod;
      }
      if (stringField(spec, 'serviceAccountName') === '') spec.serviceAccountName = stringField(spec, 'serviceAccount') || DEFAULT_SERVICE_ACCOUNT;
      spec.serviceAccount = spec.serviceAccountName;
      const account = await lookUp(a, spec.serviceAccountName as string);
      if (shouldAutomount(account, spec)) mountServiceAccountToken(spec);
      const pullSecrets = arrayField(spec, 'imagePullSecrets');
      const accountPullSecrets = arrayField(account, 'imagePullSecrets');
      if (pullSecrets.length === 0 && accountPullSecrets.length > 0) spec.imagePullSecrets = accountPullSecrets.map((s) => ({ name: stringField(s, 'name') }));
      return pod;
    },
    async validate(a) {
      const pod = a.object as JsonObject;
      await check(a, pod, ensureSpec(pod));
    },
  };
};

