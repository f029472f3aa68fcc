/**
 * Admission plugins by name (apiserver pkg/admission/plugins.go): each name maps to a factory
 * `(config, deps) => AdmissionPlugin`. The built-in plugins register here (plugins/index.ts); the
 * webhook plugins (MutatingAdmissionWebhook, ValidatingAdmissionWebhook, ImagePolicyWebhook)
 * register through the same interface from src/admission/webhook. `buildPlugins` makes the
 * enabled ones, in the order given, each with its configuration from the admission
 * configuration file. A factory runs once, at start, before the server listens; it may throw
 * PluginConfigError (or any Error) for a configuration it cannot use, which stops the server
 * with `couldn't init admission plugin "NAME": <message>`.
 *
 * What plugins get (AdmissionPluginDeps) is read-mostly: objects come from this replica's watch
 * cache, never from the store on the normal path (a request must not cost a store read per
 * plugin); writes (ResourceQuota's status, NamespaceAutoProvision's namespaces) go through
 * `client`, as the server itself, so they pass admission again with no user.
 */
import type { AuthorizationAttributes, AuthorizationResult } from '../authz';
import type { AdmissionPlugin } from './admission-chain';
import type { AdmissionConfigProvider, AdmissionPluginConfig } from './admission-config';
import { AdmissionError } from './errors';
import type { LogLine } from '../observability/logger';
import type { JsonObject } from '../apis/object';

export type { AdmissionPluginConfig } from './admission-config';

/**
 * Objects as this replica's watch cache holds them. Returned objects are shared with the cache:
 * a plugin must never change one (deepCopy it first). Reads throw the storage error
 * `NotReady` (429 at the edge) while the cache is (re)filling.
 */
export interface AdmissionObjects {
  /** The object stored at `key` (`/registry/<resource>/<namespace>/<name>`), or undefined. */
  get(key: string): JsonObject | undefined;
  /** Every object whose key starts with `prefix` (e.g. `/registry/limitranges/<namespace>/`). */
  list(prefix: string): readonly JsonObject[];
  /**
   * Like get, but on a miss waits until the cache holds everything the store had committed when
   * the call began (one quorum read of the store's revision), then looks again: for an object
   * created through another replica a moment ago (a namespace, a service account).
   */
  getFresh(key: string): Promise<JsonObject | undefined>;
  /** A quorum read of the store, bypassing the cache (NamespaceLifecycle's live lookup). */
  getLive(key: string): Promise<JsonObject | undefined>;
}

/** A served resource, as the server's writes name it. */
export interface ResourceRef {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

/**
 * Writes as the server itself (no user, so no authorization; admission runs with no user).
 * Errors are ApiErrors: 409 AlreadyExists / Conflict, 404, 403.
 */
export interface AdmissionClient {
  create(target: ResourceRef, namespace: string, object: JsonObject): Promise<JsonObject>;
  /** Replaces the object's status if its metadata.resourceVersion is still current; 409 Conflict otherwise. */
  updateStatus(target: ResourceRef, namespace: string, object: JsonObject): Promise<JsonObject>;
}

export interface AdmissionAuthorizer {
  authorize(attributes: AuthorizationAttributes): Promise<AuthorizationResult>;
}

/** What a kind maps to (OwnerReferencesPermissionEnforcement's REST mapping). */
export interface KindMapping {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly namespaced: boolean;
}

/** kube-apiserver's legacy per-plugin flags (DefaultTolerationSeconds'). */
export interface AdmissionFlagValues {
  readonly defaultNotReadyTolerationSeconds: number;
  readonly defaultUnreachableTolerationSeconds: number;
}

export const DEFAULT_ADMISSION_FLAG_VALUES: AdmissionFlagValues = { defaultNotReadyTolerationSeconds: 300, defaultUnreachableTolerationSeconds: 300 };

/**
 * What every factory receives. Fields are only ever added (the webhook plugins add what they
 * need as optional fields); none is removed.
 */
export interface AdmissionPluginDeps {
  readonly objects: AdmissionObjects;
  readonly client: AdmissionClient;
  readonly authorizer: AdmissionAuthorizer;
  /** apiVersion + kind to resource; undefined when the kind is not served. */
  readonly mapKind: (apiVersion: string, kind: string) => KindMapping | undefined;
  readonly flags: AdmissionFlagValues;
  readonly log: LogLine;
  readonly now: () => number;
}

/**
 * Makes one plugin. `config` is the plugin's entry of the admission configuration file, or
 * undefined when it has none. Called once per server start.
 */
export type AdmissionPluginFactory = (config: AdmissionPluginConfig | undefined, deps: AdmissionPluginDeps) => AdmissionPlugin | Promise<AdmissionPlugin>;

export class AdmissionPluginRegistry {
  private readonly factories = new Map<string, AdmissionPluginFactory>();

  /** Registers `name`; registering a name twice is a programmer error. */
  register(name: string, factory: AdmissionPluginFactory): void {
    if (this.factories.has(name)) throw new Error(`admission plugin "${name}" registered twice`);
    this.factories.set(name, factory);
  }

  has(name: string): boolean {
    return this.factories.has(name);
  }

  get registered(): ReadonlySet<string> {
    return new Set(this.factories.keys());
  }

  /** Makes the plugins called `names`, in that order. */
  async buildPlugins(names: readonly string[], configs: AdmissionConfigProvider, deps: AdmissionPluginDeps): Promise<AdmissionPlugin[]> {
    const plugins: AdmissionPlugin[] = [];
    for (const name of names) {
      const factory = this.factories.get(name);
      if (factory === undefined) throw new AdmissionError('PluginInitFailed', `unknown admission plugin: ${name}`);
      try {
        plugins.push(await factory(configs.configFor(name), deps));
      } catch (err) {
        throw new AdmissionError('PluginInitFailed', `couldn't init admission plugin "${name}": ${(err as Error).message}`, { cause: err });
      }
    }
    return plugins;
  }
}
