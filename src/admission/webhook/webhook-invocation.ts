/**
 * Whether a webhook is called for a request, and in which version (apiserver
 * admission/plugin/webhook/generic/webhook.go ShouldCallHook, predicates/namespace and
 * predicates/object, and admission VersionedAttributes):
 *
 * 1. rules against the request as made; with matchPolicy Equivalent and no match, against the
 *    resources that share its storage (the webhook's earlier rules first), and the webhook is
 *    then called with the object converted to the version it registered for;
 * 2. namespaceSelector: namespaced requests by their namespace's labels (the watch cache, then
 *    the store), Namespace objects by their own (on create and update, from the request's
 *    object); other cluster-scoped requests always match. A missing namespace is a 404;
 * 3. objectSelector: the object's labels or the old object's; an absent object never matches.
 *
 * A selector that cannot be parsed, or a missing namespace, is an error only for a webhook whose
 * rules and other selector match, as v1.25 orders it.
 */
import type { AdmissionAttributes } from '../admission-chain';
import { errors } from '../../util';
import { ruleMatches, type RuleAttributes } from './rules';
import type { GroupVersionKind, GroupVersionResource } from './admission-review';
import type { ParsedSelector, WebhookAccessor } from './webhook-accessor';
import { labelsOf, type JsonObject } from '../../apis/object';

export interface ResourceCatalog {
  /** The served resources that share storage with this one, itself included, in the server's order. */
  equivalentResources(resource: GroupVersionResource): readonly GroupVersionResource[];
  /** The kind served at a resource and subresource; undefined when none. */
  kindFor(resource: GroupVersionResource, subresource: string): GroupVersionKind | undefined;
  /** The object in another version of its kind (apiVersion and kind set); undefined without a conversion. */
  convert(object: JsonObject, apiVersion: string): JsonObject | undefined;
  /**
   * A patched object as decoding into its Go type leaves it: checked against the kind's schema
   * (throws an Error whose message says why for a wrong type), unknown fields dropped, v1.25's
   * defaults applied. Absent: the object is taken as it is.
   */
  normalize?(resource: GroupVersionResource, object: JsonObject): JsonObject;
}

export interface NamespaceLookup {
  /** The namespace object; undefined when it does not exist. */
  namespace(name: string): Promise<JsonObject | undefined>;
}

/** The request as webhooks see it: attributes, and the namespace rules and selectors read. */
export interface RequestView {
  readonly attributes: AdmissionAttributes;
  /** For a Namespace object, its own name on every operation but create (kube's request info). */
  readonly namespace: string;
  readonly resource: GroupVersionResource;
  readonly kind: GroupVersionKind;
}

export function requestViewOf(attributes: AdmissionAttributes): RequestView {
  const isNamespace = attributes.group === '' && attributes.resource === 'namespaces';
  return {
    attributes,
    namespace: isNamespace && attributes.operation !== 'CREATE' ? attributes.name : attributes.namespace,
    resource: { group: attributes.group, version: attributes.version, resource: attributes.resource },
    kind: { group: attributes.group, version: attributes.version, kind: attributes.kind },
  };
}

export interface WebhookInvocation {
  readonly hook: WebhookAccessor;
  readonly resource: GroupVersionResource;
  readonly subresource: string;
  readonly kind: GroupVersionKind;
}

export function apiVersionOf(gv: { group: string; version: string }): string {
  return gv.group === '' ? gv.version : `${gv.group}/${gv.version}`;
}

function sameResource(a: GroupVersionResource, b: GroupVersionResource): boolean {
  return a.group === b.group && a.version === b.version && a.resource === b.resource;
}

type SelectorOutcome = { matches: boolean; error?: undefined } | { matches: false; error: Error };

async function namespaceOutcome(hook: WebhookAccessor, view: RequestView, object: JsonObject | undefined, namespaces: NamespaceLookup): Promise<SelectorOutcome> {
  const { attributes } = view;
  if (view.namespace === '' && attributes.resource !== 'namespaces') return { matches: true };
  const parsed: ParsedSelector = hook.namespaceSelector;
  if ('error' in parsed) return { matches: false, error: errors.internal(new Error(parsed.error)) };
  if (parsed.selector.isEmpty()) return { matches: true };
  let labels: Record<string, string>;
  if (attributes.resource === 'namespaces' && attributes.subresource === '' && (attributes.operation === 'CREATE' || attributes.operation === 'UPDATE')) {
    labels = labelsOf(object);
  } else {
    const found = await namespaces.namespace(view.namespace);
    if (found === undefined) return { matches: false, error: errors.notFound({ group: '', resource: 'namespaces' }, view.namespace) };
    labels = labelsOf(found);
  }
  return { matches: parsed.selector.matches(labels) };
}

function objectOutcome(hook: WebhookAccessor, object: JsonObject | undefined, oldObject: JsonObject | undefined): SelectorOutcome {
  const parsed = hook.objectSelector;
  if ('error' in parsed) return { matches: false, error: errors.internal(new Error(parsed.error)) };
  if (parsed.selector.isEmpty()) return { matches: true };
  // An absent object (the old object of a create, the object of a delete) matches no selector.
  const matches = (o: JsonObject | undefined) => o !== undefined && parsed.selector.matches(labelsOf(o));
  return { matches: matches(object) || matches(oldObject) };
}

/**
 * The invocation of `hook` for this request, or undefined when it does not apply. `object` and
 * `oldObject` are the current ones (a mutating webhook's selectors see earlier patches). Throws
 * the ApiError of a broken selector or a missing namespace.
 */
export async function invocationFor(hook: WebhookAccessor, view: RequestView, object: JsonObject | undefined, oldObject: JsonObject | undefined, catalog: ResourceCatalog, namespaces: NamespaceLookup): Promise<WebhookInvocation | undefined> {
  const { attributes } = view;
  const ruleAttributes: RuleAttributes = {
    operation: attributes.operation,
    group: attributes.group,
    version: attributes.version,
    resource: attributes.resource,
    subresource: attributes.subresource,
    namespace: view.namespace,
  };
  let invocation: WebhookInvocation | undefined;
  if (hook.rules.some((rule) => ruleMatches(rule, ruleAttributes))) {
    invocation = { hook, resource: view.resource, subresource: attributes.subresource, kind: view.kind };
  } else if (hook.matchPolicy === 'Equivalent') {
    const equivalents = catalog.equivalentResources(view.resource);
    search: for (const rule of hook.rules) {
      for (const equivalent of equivalents) {
        if (sameResource(equivalent, view.resource)) continue;
        if (!ruleMatches(rule, { ...ruleAttributes, group: equivalent.group, version: equivalent.version, resource: equivalent.resource })) continue;
        const kind = catalog.kindFor(equivalent, attributes.subresource);
        if (kind === undefined) throw errors.internal(new Error(`unable to convert to ${equivalent.group}/${equivalent.version}, Resource=${equivalent.resource}: unknown kind`));
        invocation = { hook, resource: equivalent, subresource: attributes.subresource, kind };
        break search;
      }
    }
  }
  if (invocation === undefined) return undefined;
  const inNamespace = await namespaceOutcome(hook, view, object, namespaces);
  if (!inNamespace.matches && inNamespace.error === undefined) return undefined;
  const byObject = objectOutcome(hook, object, oldObject);
  if (!byObject.matches && byObject.error === undefined) return undefined;
  if (inNamespace.error !== undefined) throw inNamespace.error;
  if (byObject.error !== undefined) throw byObject.error;
  return invocation;
}

/**
 * The request's object and old object in the version each webhook registered for, converted at
 * most once per version, and the object as mutating webhooks leave it (`dirty` once patched).
 */
export class VersionedObjects {
  private apiVersion: string;
  dirty = false;

  constructor(
    private readonly requestApiVersion: string,
    private currentObject: JsonObject | undefined,
    private currentOldObject: JsonObject | undefined,
    private readonly catalog: ResourceCatalog,
  ) {
    this.apiVersion = requestApiVersion;
  }

  get object(): JsonObject | undefined {
    return this.currentObject;
  }

  get oldObject(): JsonObject | undefined {
    return this.currentOldObject;
  }

  /** Moves both objects to the version of `kind`; objects of another kind (a subresource's parent) stay as they are. */
  convertTo(kind: GroupVersionKind): void {
    const target = apiVersionOf(kind);
    if (target === this.apiVersion) return;
    this.currentObject = this.convertOne(this.currentObject, target, kind.kind);
    this.currentOldObject = this.convertOne(this.currentOldObject, target, kind.kind);
    this.apiVersion = target;
  }

  private convertOne(object: JsonObject | undefined, target: string, kind: string): JsonObject | undefined {
    if (object === undefined || object.kind !== kind || object.apiVersion === target) return object;
    const converted = this.catalog.convert(object, target);
    if (converted === undefined) throw errors.internal(new Error(`no conversion of ${String(object.apiVersion)}, Kind=${kind} to ${target}`));
    return converted;
  }

  /** A webhook's patched object, in the version it was called with. */
  replaceObject(object: JsonObject): void {
    this.currentObject = object;
    this.dirty = true;
  }

  /** The object in the request's version, for the rest of the write. */
  finalObject(): JsonObject | undefined {
    if (!this.dirty) return undefined;
    const object = this.currentObject;
    if (object === undefined || object.apiVersion === this.requestApiVersion || typeof object.kind !== 'string') return object;
    const converted = this.catalog.convert(object, this.requestApiVersion);
    if (converted === undefined) throw errors.internal(new Error(`no conversion of ${String(object.apiVersion)}, Kind=${object.kind} to ${this.requestApiVersion}`));
    return converted;
  }
}
