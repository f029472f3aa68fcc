/**
 * The API Priority and Fairness configuration, kept by the controller-lease holder as every
 * kube-apiserver v1.25 keeps it (pkg/registry/flowcontrol/ensurer and the config consumer's
 * status writes):
 *
 * - The mandatory objects (`exempt`, `catch-all`, FlowSchemas and PriorityLevelConfigurations)
 *   are created when missing, recreated when deleted, and their spec restored whatever their
 *   `apf.kubernetes.io/autoupdate-spec` annotation says (which is set to "true").
 * - The suggested ones are created when missing; an existing one has its spec brought back to
 *   v1.25's when its annotation reads true, or, without a boolean annotation, when its
 *   generation is 1 (nobody changed it since the server made it); the annotation is then set to
 *   what was decided, so an object a user edited keeps the user's spec ("false").
 * - A stored object that bears the annotation but whose name this version does not ship (a
 *   bootstrap object of an older version) is deleted when the annotation reads true, and kept
 *   when it reads false or is no boolean (an operator took it over), as v1.25's
 *   removeDanglingBootstrapConfiguration does. Objects without the annotation are users' own.
 * - Every FlowSchema's `Dangling` condition says whether its priority level exists: True, reason
 *   NotFound, or False, reason Found, written on the status subresource only when it changes.
 *
 * Objects are compared and written at v1beta2 (the storage version) through the registry, with
 * the field manager kube-apiserver's ensurer and config consumer use.
 */
import { ApiError } from '../util';
import type { GenericRegistry, ServedResource } from '../registry';
import type { WatchCache } from '../storage';
import { AUTO_UPDATE_ANNOTATION, MANDATORY_FLOW_SCHEMA_NAMES, MANDATORY_PRIORITY_LEVEL_NAMES, mandatoryFlowSchemas, mandatoryPriorityLevels, suggestedFlowSchemas, suggestedPriorityLevels } from '../flowcontrol';
import { InformedController } from './informed-controller';
import { deepCopy, type JsonObject } from '../apis/object';
import { resourceKeyPrefix } from '../apis/catalogue';

const FLOW_SCHEMAS = resourceKeyPrefix({ group: 'flowcontrol.apiserver.k8s.io', resource: 'flowschemas' });
const PRIORITY_LEVELS = resourceKeyPrefix({ group: 'flowcontrol.apiserver.k8s.io', resource: 'prioritylevelconfigurations' });
const ENSURER_MANAGER = 'api-priority-and-fairness-config-producer-v1';
const STATUS_MANAGER = 'api-priority-and-fairness-config-consumer-v1';

export interface FlowControlBootstrapOptions {
  registry: GenericRegistry;
  cache: WatchCache;
  flowSchemas: ServedResource;
  priorityLevels: ServedResource;
  log?: (line: string) => void;
  resyncMs?: number;
}

type Kind = 'fs' | 'pl';

const bootstrap = {
  fs: new Map([...mandatoryFlowSchemas(), ...suggestedFlowSchemas()].map((o) => [o.metadata.name, o as unknown as JsonObject])),
  pl: new Map([...mandatoryPriorityLevels(), ...suggestedPriorityLevels()].map((o) => [o.metadata.name, o as unknown as JsonObject])),
};
const mandatory = { fs: MANDATORY_FLOW_SCHEMA_NAMES, pl: MANDATORY_PRIORITY_LEVEL_NAMES };

/** v1.25's shouldUpdateSpec: the annotation when it is a boolean, else whether the server alone wrote the object. */
export function shouldUpdateSpec(metadata: JsonObject): boolean {
  const value = ((metadata.annotations ?? {}) as Record<string, string>)[AUTO_UPDATE_ANNOTATION];
  const parsed = parseGoBool(value);
  if (parsed !== undefined) return parsed;
  return metadata.generation === 1;
}

/** Go's strconv.ParseBool. */
function parseGoBool(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  return undefined;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Record<string, unknown>)[k])]));
  }
  return value;
}

export class FlowControlBootstrap extends InformedController {
  constructor(private readonly options: FlowControlBootstrapOptions) {
    super({ cache: options.cache, queue: { name: 'priority-and-fairness-config', log: options.log }, resyncMs: options.resyncMs ?? 60_000 });
    this.inform(FLOW_SCHEMAS, (_type, object) => this.queue.add(`fs/${String((object.metadata as JsonObject).name)}`));
    this.inform(PRIORITY_LEVELS, (type, object) => {
      const name = String((object.metadata as JsonObject).name);
      this.queue.add(`pl/${name}`);
      // A level that appears or goes changes its schemas' Dangling condition.
      if (type !== 'MODIFIED') for (const fs of this.storedFlowSchemas()) if (fs.spec?.priorityLevelConfiguration?.name === name) this.queue.add(`fs/${String(fs.metadata?.name)}`);
    });
  }

  private storedFlowSchemas(): Array<{ metadata?: { name?: string }; spec?: { priorityLevelConfiguration?: { name?: string } } }> {
    return this.options.cache.isReady ? (this.options.cache.list(FLOW_SCHEMAS).items as never) : [];
  }

  protected resync(): void {
    if (!this.options.cache.isReady) return;
    for (const name of bootstrap.pl.keys()) this.queue.add(`pl/${name}`);
    for (const name of bootstrap.fs.keys()) this.queue.add(`fs/${name}`);
    for (const fs of this.storedFlowSchemas()) this.queue.add(`fs/${String(fs.metadata?.name)}`);
    for (const pl of this.options.cache.list(PRIORITY_LEVELS).items) this.queue.add(`pl/${String((pl.metadata as JsonObject | undefined)?.name)}`);
  }

  override start(): void {
    super.start();
    this.resync();
  }

  protected async handle(key: string): Promise<boolean> {
    const slash = key.indexOf('/');
    const kind = key.slice(0, slash) as Kind;
    const name = key.slice(slash + 1);
    try {
      if (!bootstrap[kind].has(name)) {
        if (await this.removeIfRetired(kind, name)) return true;
      } else {
        await this.ensure(kind, name);
      }
      if (kind === 'fs') await this.updateDangling(name);
      return true;
    } catch (err) {
      if (err instanceof ApiError && (err.code === 409 || err.code === 404)) return false;
      throw err;
    }
  }

  private served(kind: Kind): ServedResource {
    return kind === 'fs' ? this.options.flowSchemas : this.options.priorityLevels;
  }

  /**
   * Deletes an object the server made in an older version and no longer ships: one annotated
   * autoupdate-spec "true" whose name is not among this version's; true when it was deleted.
   */
  private async removeIfRetired(kind: Kind, name: string): Promise<boolean> {
    const current = this.options.cache.get(`${kind === 'fs' ? FLOW_SCHEMAS : PRIORITY_LEVELS}${name}`);
    if (current === undefined) return false;
    const metadata = (current.metadata ?? {}) as JsonObject;
    if (parseGoBool(((metadata.annotations ?? {}) as Record<string, string>)[AUTO_UPDATE_ANNOTATION]) !== true) return false;
    await this.options.registry.delete(this.served(kind), '', name, { dryRun: false, preconditions: { uid: String(metadata.uid ?? '') } });
    this.options.log?.(`priority and fairness: deleted ${kind === 'fs' ? 'FlowSchema' : 'PriorityLevelConfiguration'} ${name}, which this version no longer ships`);
    return true;
  }

  private async ensure(kind: Kind, name: string): Promise<void> {
    const wanted = bootstrap[kind].get(name);
    if (wanted === undefined) return;
    const { cache, registry } = this.options;
    const current = cache.get(`${kind === 'fs' ? FLOW_SCHEMAS : PRIORITY_LEVELS}${name}`);
    const write = { dryRun: false, subresource: '' as const, fieldManager: ENSURER_MANAGER };
    if (current === undefined) {
      await registry.create(this.served(kind), '', deepCopy(wanted), write);
      this.options.log?.(`priority and fairness: created ${kind === 'fs' ? 'FlowSchema' : 'PriorityLevelConfiguration'} ${name}`);
      return;
    }
    const metadata = (current.metadata ?? {}) as JsonObject;
    const autoUpdate = mandatory[kind].has(name) || shouldUpdateSpec(metadata);
    const annotations = { ...((metadata.annotations ?? {}) as Record<string, string>) };
    const annotationStale = parseGoBool(annotations[AUTO_UPDATE_ANNOTATION]) !== autoUpdate;
    const specStale = autoUpdate && !sameJson(current.spec, wanted.spec);
    if (!annotationStale && !specStale) return;
    annotations[AUTO_UPDATE_ANNOTATION] = String(autoUpdate);
    const next: JsonObject = { ...current, metadata: { ...metadata, annotations } };
    if (specStale) next.spec = deepCopy(wanted.spec);
    await registry.update(this.served(kind), '', name, next, write);
  }

  private async updateDangling(name: string): Promise<void> {
    const { cache, registry } = this.options;
    const current = cache.get(`${FLOW_SCHEMAS}${name}`);
    if (current === undefined) return;
    const level = String(((current.spec as JsonObject | undefined)?.priorityLevelConfiguration as JsonObject | undefined)?.name ?? '');
    const found = cache.get(`${PRIORITY_LEVELS}${level}`) !== undefined;
    const wanted = found
      ? { type: 'Dangling', status: 'False', reason: 'Found', message: 'This FlowSchema references an existing PriorityLevelConfiguration object' }
      : { type: 'Dangling', status: 'True', reason: 'NotFound', message: `This FlowSchema references the PriorityLevelConfiguration object named "${level}" but there is no such object` };
    const status = (current.status ?? {}) as JsonObject;
    const conditions = ((status.conditions ?? []) as JsonObject[]).filter((c) => c.type !== 'Dangling');
    const existing = ((status.conditions ?? []) as JsonObject[]).find((c) => c.type === 'Dangling');
    if (existing !== undefined && existing.status === wanted.status && existing.reason === wanted.reason && existing.message === wanted.message) return;
    const lastTransitionTime = existing !== undefined && existing.status === wanted.status ? existing.lastTransitionTime : new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    const next: JsonObject = { ...current, status: { ...status, conditions: [...conditions, { ...wanted, lastTransitionTime }] } };
    await registry.update(this.options.flowSchemas, '', name, next, { dryRun: false, subresource: 'status', fieldManager: STATUS_MANAGER });
  }
}
