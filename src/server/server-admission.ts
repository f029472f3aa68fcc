/**
 * How src/admission meets the server: the plugin registry (v1.25's built-in plugins and the
 * webhook plugins, admission-webhooks.ts), what plugins
 * get (objects from this replica's watch cache with indexes for what they list per request,
 * writes through the registry as the server itself, the authorizer, kind-to-resource mapping),
 * the chain built from the flags with the RBAC escalation check as an always-on step, and the
 * PriorityClasses every cluster has (v1.25's scheduling/bootstrap-system-priority-classes hook).
 */
import {
  AdmissionPluginRegistry,
  CachedObjects,
  DEFAULT_ADMISSION_FLAG_VALUES,
  INDEXED_PREFIXES,
  SYSTEM_PRIORITY_CLASSES,
  buildAdmission,
  registerBuiltinPlugins,
  type AdmissionChain,
  type AdmissionClient,
  type AdmissionFlagValues,
  type AdmissionOptions,
  type AdmissionPlugin,
  type AdmissionPluginDeps,
  type AdmissionStepObserver,
  type KindMapping,
} from '../admission';
import type { CircuitBreakerOptions } from '../admission';
import type { Authorizer } from '../authz';
import type { GenericRegistry, ServedResource } from '../registry';
import type { ObjectStore, WatchCache } from '../storage';
import { ApiError } from '../util';
import { registerWebhookPlugins, type WebhookWiring } from './admission-webhooks';
import { type JsonObject, deepCopy, nameOf } from '../apis/object';

/** kube-apiserver's admission options: the three flags and the plugins' legacy flags, and Carina's webhook circuit breaker. */
export interface ServerAdmissionOptions extends AdmissionOptions {
  readonly flags: AdmissionFlagValues;
  /** Per webhook (--admission-webhook-circuit-breaker-*); absent: DEFAULT_CIRCUIT_BREAKER. */
  readonly circuitBreaker?: CircuitBreakerOptions;
}

export const DEFAULT_SERVER_ADMISSION_OPTIONS: ServerAdmissionOptions = { enablePlugins: [], disablePlugins: [], configFile: '', flags: DEFAULT_ADMISSION_FLAG_VALUES };

/**
 * Every admission plugin by name: the built-in ones and the webhook plugins. `webhooks` is asked
 * for the webhooks' wiring only when one of them is made (a registry that only checks flag
 * names never asks).
 */
export function admissionPluginRegistry(webhooks: () => WebhookWiring = unwired): AdmissionPluginRegistry {
  const plugins = new AdmissionPluginRegistry();
  registerBuiltinPlugins(plugins);
  registerWebhookPlugins(plugins, webhooks);
  return plugins;
}

function unwired(): never {
  throw new Error('the webhook plugins are not wired to a server');
}

/**
 * The registry as the admission plugins reach it (NamespaceLifecycle's and ResourceQuota's
 * writes). The registry runs the admission chain on every write, so it can only be built after
 * the chain: this is the one late-bound step of the server's composition, bound once by
 * startApiServer as soon as the registry exists, before any request is served. A plugin that
 * wrote before that would fail loudly rather than write around admission.
 */
export class LateBoundRegistry {
  private bound?: GenericRegistry;

  bind(registry: GenericRegistry): void {
    if (this.bound !== undefined) throw new Error('the registry is bound already');
    this.bound = registry;
  }

  get registry(): GenericRegistry {
    if (this.bound === undefined) throw new Error('the registry is not built yet');
    return this.bound;
  }
}

/** Writes as the server: no user, so admission runs again with none and authorization is not asked. */
export function registryAdmissionClient(late: LateBoundRegistry, lookup: (group: string, version: string, resource: string) => ServedResource | undefined): AdmissionClient {
  const resourceOf = (group: string, version: string, resource: string) => {
    const found = lookup(group, version, resource);
    if (found === undefined) throw new Error(`the catalogue has no ${resource}`);
    return found;
  };
  return {
    create: (target, namespace, object) => late.registry.create(resourceOf(target.group, target.version, target.resource), namespace, object, { dryRun: false, subresource: '' }),
    async updateStatus(target, namespace, object) {
      const result = await late.registry.update(resourceOf(target.group, target.version, target.resource), namespace, nameOf(object), object, { dryRun: false, subresource: 'status' });
      return result.object;
    },
  };
}

export interface ServerAdmissionInput {
  options: ServerAdmissionOptions;
  plugins: AdmissionPluginRegistry;
  cache: WatchCache;
  store: ObjectStore;
  /** The registry the chain is built for, bound once it exists (it needs the chain first). */
  registry: LateBoundRegistry;
  lookup: (group: string, version: string, resource: string) => ServedResource | undefined;
  lookupKind?: (group: string, version: string, kind: string) => ServedResource | undefined;
  authorizer: Authorizer;
  /** Steps run whatever the flags say (the RBAC escalation check). */
  internal: readonly AdmissionPlugin[];
  /** Admission's step metrics (apiserver_admission_step_admission_duration_seconds). */
  observeStep?: AdmissionStepObserver;
  log: (line: string) => void;
}

export interface ServerAdmission {
  chain: AdmissionChain;
  enabled: readonly string[];
  stop(): void;
}

export async function buildServerAdmission(input: ServerAdmissionInput): Promise<ServerAdmission> {
  const { cache, store } = input;
  const objects = new CachedObjects(cache, {
    indexedPrefixes: INDEXED_PREFIXES,
    currentRevision: () => store.currentRevision(),
    readLive: async (key) => (await store.get(key))?.object,
  });
  objects.start();
  const mapKind = (apiVersion: string, kind: string): KindMapping | undefined => {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = apiVersion.slice(slash + 1);
    const found = input.lookupKind?.(group, version, kind);
    return found === undefined ? undefined : { group: found.group, version: found.version, resource: found.resource, namespaced: found.namespaced };
  };
  const deps: AdmissionPluginDeps = {
    objects,
    client: registryAdmissionClient(input.registry, input.lookup),
    authorizer: input.authorizer,
    mapKind,
    flags: input.options.flags,
    log: input.log,
    now: Date.now,
  };
  try {
    const built = await buildAdmission(input.options, input.plugins, deps, input.internal, input.observeStep);
    input.log(`admission plugins: ${built.enabled.join(', ')}`);
    return {
      chain: built.chain,
      enabled: built.enabled,
      stop: () => {
        built.chain.stop();
        objects.stop();
      },
    };
  } catch (err) {
    objects.stop();
    throw err;
  }
}

/** Creates system-node-critical and system-cluster-critical when absent (every replica; idempotent). */
export async function bootstrapPriorityClasses(registry: GenericRegistry, priorityClasses: ServedResource): Promise<void> {
  for (const priorityClass of SYSTEM_PRIORITY_CLASSES) {
    const name = String((priorityClass.metadata as JsonObject).name);
    try {
      await registry.get(priorityClasses, '', name, null);
      continue;
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
    try {
      await registry.create(priorityClasses, '', deepCopy(priorityClass), { dryRun: false, subresource: '' });
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409)) throw err;
    }
  }
}
