/**
 * What the plugin tests share: objects in a map standing for the watch cache (and, apart, what a
 * quorum read of the store would find), a recording client and authorizer, attributes with
 * kube's defaults, and `admit`, which runs one plugin through a real AdmissionChain (mutate,
 * then validate) as the registry does; `refusal` is test/support/api-refusal.ts's, passed on.
 */
import { AdmissionChain, DEFAULT_ADMISSION_FLAG_VALUES, type AdmissionPluginRegistry, pluginConfigFromText, type AdmissionAttributes, type AdmissionObjects, type AdmissionPlugin, type AdmissionPluginDeps, type AdmissionPluginFactory } from '../../../../src/admission';
import type { AuthorizationAttributes, AuthorizationResult } from '../../../../src/authz';
import type { UserInfo } from '../../../../src/authn/user-info';
import type { JsonObject } from '../../../../src/apis/object';

export { refusal } from '../../../support/api-refusal';

export class FakeObjects implements AdmissionObjects {
  /** What the cache holds. */
  readonly cached = new Map<string, JsonObject>();
  /** What only the store holds (not yet in the cache): getFresh and getLive find it. */
  readonly storeOnly = new Map<string, JsonObject>();
  freshReads = 0;
  liveReads = 0;

  put(key: string, object: JsonObject): this {
    this.cached.set(key, object);
    return this;
  }

  get(key: string): JsonObject | undefined {
    return this.cached.get(key);
  }

  list(prefix: string): readonly JsonObject[] {
    return [...this.cached.entries()].filter(([key]) => key.startsWith(prefix)).sort(([a], [b]) => (a < b ? -1 : 1)).map(([, o]) => o);
  }

  async getFresh(key: string): Promise<JsonObject | undefined> {
    this.freshReads++;
    return this.cached.get(key) ?? this.storeOnly.get(key);
  }

  async getLive(key: string): Promise<JsonObject | undefined> {
    this.liveReads++;
    return this.storeOnly.get(key) ?? this.cached.get(key);
  }
}

export interface TestDeps extends AdmissionPluginDeps {
  objects: FakeObjects;
  created: Array<{ resource: string; namespace: string; object: JsonObject }>;
  statusUpdates: Array<{ resource: string; namespace: string; object: JsonObject }>;
  authorizations: AuthorizationAttributes[];
}

/** The three webhook plugins as plugins that handle nothing: chains built in unit tests call no webhook. */
export function registerInertWebhookPlugins(plugins: AdmissionPluginRegistry): void {
  for (const name of ['MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook', 'ImagePolicyWebhook']) {
    plugins.register(name, () => ({ name, sideEffects: 'None', handles: () => false }));
  }
}

export function testDeps(options: { allow?: (a: AuthorizationAttributes) => boolean; now?: () => number; updateStatus?: (object: JsonObject) => JsonObject } = {}): TestDeps {
  const objects = new FakeObjects();
  const created: TestDeps['created'] = [];
  const statusUpdates: TestDeps['statusUpdates'] = [];
  const authorizations: AuthorizationAttributes[] = [];
  return {
    objects,
    created,
    statusUpdates,
    authorizations,
    client: {
      async create(target, namespace, object) {
        created.push({ resource: target.resource, namespace, object });
        return object;
      },
      async updateStatus(target, namespace, object) {
        statusUpdates.push({ resource: target.resource, namespace, object: structuredClone(object) });
        return options.updateStatus ? options.updateStatus(object) : object;
      },
    },
    authorizer: {
      async authorize(a): Promise<AuthorizationResult> {
        authorizations.push(a);
        return { decision: options.allow?.(a) === true ? 'allow' : 'no-opinion', reason: '' };
      },
    },
    mapKind: (apiVersion, kind) => (apiVersion === 'apps/v1' && kind === 'Deployment' ? { group: 'apps', version: 'v1', resource: 'deployments', namespaced: true } : apiVersion === 'v1' && kind === 'ConfigMap' ? { group: '', version: 'v1', resource: 'configmaps', namespaced: true } : undefined),
    flags: DEFAULT_ADMISSION_FLAG_VALUES,
    log: () => undefined,
    now: options.now ?? Date.now,
  };
}

export const ALICE: UserInfo = { name: 'alice', uid: '', groups: ['system:authenticated'], extra: {} };

export interface Recorded {
  warnings: string[];
  annotations: Record<string, string>;
}

/** Attributes of a request on `object` (a pod create in namespace `ns` unless told otherwise). */
export function attributes(partial: Partial<AdmissionAttributes> & { recorded?: Recorded } = {}): AdmissionAttributes {
  const recorded = partial.recorded;
  const object = partial.object;
  const name = typeof (object?.metadata as JsonObject | undefined)?.name === 'string' ? String((object?.metadata as JsonObject).name) : String(((partial.oldObject?.metadata ?? {}) as JsonObject).name ?? '');
  const base: AdmissionAttributes = {
    operation: 'CREATE',
    group: '',
    version: 'v1',
    resource: 'pods',
    subresource: '',
    kind: 'Pod',
    namespace: 'ns',
    name,
    dryRun: false,
    userInfo: ALICE,
    recorder: recorded === undefined ? undefined : { warn: (text) => recorded.warnings.push(text), annotate: (key, value) => (recorded.annotations[key] = value) },
  };
  const { recorded: _r, ...rest } = partial;
  return { ...base, ...rest };
}

/** Runs `plugin` as the registry does: mutate, then validate; returns the object it continues with. */
export async function admit(plugin: AdmissionPlugin, a: AdmissionAttributes): Promise<JsonObject | undefined> {
  const chain = new AdmissionChain([plugin]);
  const object = await chain.mutate(a);
  await chain.validate({ ...a, object });
  return object;
}

/** A plugin made by its factory, with the configuration document `config` (YAML or JSON) if given. */
export async function makePlugin(factory: AdmissionPluginFactory, deps: AdmissionPluginDeps, config?: string): Promise<AdmissionPlugin> {
  return factory(config === undefined ? undefined : pluginConfigFromText(config), deps);
}

export function pod(name: string, spec: JsonObject = {}, metadata: JsonObject = {}): JsonObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns', ...metadata }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } };
}

export function namespace(name: string, labels: Record<string, string> = {}, extra: JsonObject = {}): JsonObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels, ...((extra.metadata as JsonObject | undefined) ?? {}) }, status: { phase: 'Active', ...((extra.status as JsonObject | undefined) ?? {}) } };
}
