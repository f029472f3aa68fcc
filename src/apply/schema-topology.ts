/**
 * How server-side apply sees the shape of each field: scalar, struct, map or list, and for the
 * composite ones whether they merge granularly or are replaced whole ("atomic").
 *
 * kube-apiserver v1.25 derives this from the same OpenAPI documents we ship (kube-openapi
 * pkg/schemaconv): `x-kubernetes-list-type` (atomic/set/map) with `x-kubernetes-list-map-keys`,
 * `x-kubernetes-map-type` (atomic/granular) for maps and structs, and, for lists without a list
 * type, the strategic-merge markers: patch strategy `merge` with a merge key is a map list keyed
 * by it, `merge` without a key a set, anything else atomic. Kinds without a schema use the
 * "deduced" type of structured-merge-diff: maps granular with every key owned on its own, lists
 * atomic.
 */
import { OpenApiSchemas, resolveSchema, type OpenApiSchema, type SchemaTable } from '../apis/schema/openapi-schemas';
import { isJsonObject } from '../apis/object';

export type ListType = 'atomic' | 'set' | 'map';

/** The extensions server-side apply reads, beyond what OpenApiSchema declares. */
interface ApplySchema extends OpenApiSchema {
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  required?: string[];
  default?: unknown;
}

export interface ChildTopology {
  readonly node: TopologyNode;
  /** True for a field the struct declares; map keys and undeclared fields are not. */
  readonly declared: boolean;
}

export interface TopologyNode {
  /** 'untyped' nodes take their shape from the value: see `resolve`. */
  readonly kind: 'scalar' | 'struct' | 'map' | 'list' | 'untyped';
  /** Struct or map replaced whole; for lists, listType === 'atomic'. */
  readonly atomic: boolean;
  readonly listType: ListType;
  readonly listMapKeys: readonly string[];
  /** The node of a struct field or map value. */
  child(name: string): ChildTopology;
  /** The node of a list's items. */
  items(): TopologyNode;
  /** The schema default of an item's key field, used when an item omits it (e.g. protocol "TCP"). */
  keyDefault(name: string): unknown;
  /** The concrete node for a value of this node (untyped nodes deduce it from the value). */
  resolve(value: unknown): TopologyNode;
  /**
   * What Go would serialise for a freshly made object of this type: non-pointer structs as `{}`,
   * required lists, maps and pointers as null. Kubernetes compares a create against that object.
   */
  zeroValue(): unknown;
}

class ScalarNode implements TopologyNode {
  readonly kind = 'scalar' as const;
  readonly atomic = true;
  readonly listType: ListType = 'atomic';
  readonly listMapKeys: readonly string[] = [];
  child(): ChildTopology {
    return { node: UNTYPED, declared: false };
  }
  items(): TopologyNode {
    return UNTYPED_ATOMIC;
  }
  keyDefault(): unknown {
    return undefined;
  }
  resolve(): TopologyNode {
    return this;
  }
  zeroValue(): unknown {
    return undefined;
  }
}

/** structured-merge-diff's `__untyped_deduced_` (granular) and `__untyped_atomic_` types. */
class UntypedNode implements TopologyNode {
  readonly kind = 'untyped' as const;
  readonly listType: ListType = 'atomic';
  readonly listMapKeys: readonly string[] = [];
  constructor(readonly atomic: boolean) {}
  child(): ChildTopology {
    return { node: this, declared: false };
  }
  items(): TopologyNode {
    return UNTYPED_ATOMIC;
  }
  keyDefault(): unknown {
    return undefined;
  }
  resolve(value: unknown): TopologyNode {
    if (isJsonObject(value)) return this.atomic ? ATOMIC_DEDUCED_MAP : DEDUCED_MAP;
    if (Array.isArray(value)) return DEDUCED_LIST;
    return SCALAR;
  }
  zeroValue(): unknown {
    return undefined;
  }
}

class DeducedMapNode implements TopologyNode {
  readonly kind = 'map' as const;
  readonly listType: ListType = 'atomic';
  readonly listMapKeys: readonly string[] = [];
  constructor(readonly atomic: boolean) {}
  child(): ChildTopology {
    return { node: this.atomic ? UNTYPED_ATOMIC : UNTYPED, declared: false };
  }
  items(): TopologyNode {
    return UNTYPED_ATOMIC;
  }
  keyDefault(): unknown {
    return undefined;
  }
  resolve(): TopologyNode {
    return this;
  }
  zeroValue(): unknown {
    return undefined;
  }
}

class DeducedListNode implements TopologyNode {
  readonly kind = 'list' as const;
  readonly atomic = true;
  readonly listType: ListType = 'atomic';
  readonly listMapKeys: readonly string[] = [];
  child(): ChildTopology {
    return { node: UNTYPED_ATOMIC, declared: false };
  }
  items(): TopologyNode {
    return UNTYPED_ATOMIC;
  }
  keyDefault(): unknown {
    return undefined;
  }
  resolve(): TopologyNode {
    return this;
  }
  zeroValue(): unknown {
    return undefined;
  }
}

const SCALAR = new ScalarNode();
export const UNTYPED: TopologyNode = new UntypedNode(false);
const UNTYPED_ATOMIC: TopologyNode = new UntypedNode(true);
const DEDUCED_MAP = new DeducedMapNode(false);
const ATOMIC_DEDUCED_MAP = new DeducedMapNode(true);
const DEDUCED_LIST = new DeducedListNode();

/** A node backed by an OpenAPI schema; children are built on first use. */
class SchemaNode implements TopologyNode {
  readonly kind: 'scalar' | 'struct' | 'map' | 'list' | 'untyped';
  readonly atomic: boolean;
  readonly listType: ListType = 'atomic';
  readonly listMapKeys: readonly string[] = [];
  private readonly schema: ApplySchema;
  private readonly childCache = new Map<string, ChildTopology>();
  private itemNode: TopologyNode | undefined;

  /** `wrapper` is the property schema whose `$ref`/`allOf` led here: extensions may sit on either. */
  constructor(private readonly schemas: SchemaTable, wrapper: ApplySchema, private readonly depth = 0) {
    const resolved = resolveSchema(schemas, wrapper).schema as ApplySchema;
    this.schema = resolved;
    const extension = <K extends keyof ApplySchema>(key: K): ApplySchema[K] => wrapper[key] ?? resolved[key];
    const mapType = extension('x-kubernetes-map-type');
    if (resolved['x-kubernetes-int-or-string'] === true) {
      this.kind = 'scalar';
      this.atomic = true;
    } else if (resolved.type === 'array' || resolved.items !== undefined) {
      this.kind = 'list';
      const { listType, keys } = listTopology(extension('x-kubernetes-list-type'), extension('x-kubernetes-list-map-keys'),
        extension('x-kubernetes-patch-strategy'), extension('x-kubernetes-patch-merge-key'));
      this.listType = listType;
      this.listMapKeys = keys;
      this.atomic = listType === 'atomic';
    } else if (resolved.properties !== undefined) {
      this.kind = 'struct';
      this.atomic = mapType === 'atomic';
    } else if (isJsonObject(resolved.additionalProperties)) {
      this.kind = 'map';
      this.atomic = mapType === 'atomic';
    } else if (resolved.type === 'object' || resolved.type === undefined || resolved['x-kubernetes-preserve-unknown-fields'] === true) {
      // Free-form objects (RawExtension, JSON) and schema-less values are deduced from the value.
      this.kind = 'untyped';
      this.atomic = mapType === 'atomic';
    } else {
      this.kind = 'scalar';
      this.atomic = true;
    }
  }

  child(name: string): ChildTopology {
    const cached = this.childCache.get(name);
    if (cached !== undefined) return cached;
    const child = this.computeChild(name);
    this.childCache.set(name, child);
    return child;
  }

  private computeChild(name: string): ChildTopology {
    if (this.kind === 'untyped') return { node: this.atomic ? UNTYPED_ATOMIC : UNTYPED, declared: false };
    const properties = this.schema.properties;
    if (properties !== undefined && Object.prototype.hasOwnProperty.call(properties, name)) {
      return { node: new SchemaNode(this.schemas, properties[name] as ApplySchema, this.depth + 1), declared: true };
    }
    const additional = this.schema.additionalProperties;
    if (isJsonObject(additional)) return { node: new SchemaNode(this.schemas, additional as ApplySchema, this.depth + 1), declared: false };
    return { node: UNTYPED, declared: false };
  }

  items(): TopologyNode {
    if (this.itemNode === undefined) {
      const items = this.schema.items;
      this.itemNode = items === undefined ? UNTYPED_ATOMIC : new SchemaNode(this.schemas, items as ApplySchema, this.depth + 1);
    }
    return this.itemNode;
  }

  keyDefault(name: string): unknown {
    const items = this.schema.items;
    if (items === undefined) return undefined;
    const itemSchema = resolveSchema(this.schemas, items).schema;
    const field = itemSchema.properties?.[name] as ApplySchema | undefined;
    return field?.default;
  }

  resolve(value: unknown): TopologyNode {
    return this.kind === 'untyped' ? (this.atomic ? UNTYPED_ATOMIC : UNTYPED).resolve(value) : this;
  }

  zeroValue(): unknown {
    if (this.kind !== 'struct' || this.depth > 32) return undefined;
    const out: Record<string, unknown> = {};
    const required = new Set(this.schema.required ?? []);
    for (const [name, property] of Object.entries(this.schema.properties ?? {})) {
      const wrapper = property as ApplySchema;
      const child = this.child(name).node;
      // kube-openapi marks non-pointer struct fields with `default: {}`; Go always serialises those.
      const valueStruct = isJsonObject(wrapper.default) && Object.keys(wrapper.default).length === 0;
      if (valueStruct && child.kind === 'struct') {
        out[name] = child.zeroValue();
      } else if (valueStruct && child.kind === 'scalar') {
        // Structs that marshal as scalars: a zero metav1.Time is written as null.
        out[name] = null;
      } else if (required.has(name) && child.kind !== 'scalar') {
        out[name] = null;
      }
    }
    return out;
  }
}

function listTopology(listType: string | undefined, mapKeys: string[] | undefined, strategy: string | undefined, mergeKey: string | undefined): { listType: ListType; keys: string[] } {
  if (listType !== undefined) {
    if (listType === 'set') return { listType: 'set', keys: [] };
    if (listType === 'map') return { listType: 'map', keys: [...(mapKeys ?? [])] };
    return { listType: 'atomic', keys: [] };
  }
  if (strategy === 'merge' || strategy === 'merge,retainKeys') {
    if (mergeKey !== undefined && mergeKey !== '') return { listType: 'map', keys: [mergeKey] };
    // Associative lists of scalars without keys are sets.
    return { listType: 'set', keys: [] };
  }
  return { listType: 'atomic', keys: [] };
}

const kindCache = new WeakMap<OpenApiSchemas, Map<string, TopologyNode>>();

/** The topology of a top-level kind, or the deduced (untyped) one when no schema describes it. */
export function topologyForKind(apiVersion: string, kind: string, schemas: OpenApiSchemas = OpenApiSchemas.shared()): TopologyNode {
  let byKind = kindCache.get(schemas);
  if (byKind === undefined) {
    byKind = new Map();
    kindCache.set(schemas, byKind);
  }
  const cacheKey = `${apiVersion}/${kind}`;
  const cached = byKind.get(cacheKey);
  if (cached !== undefined) return cached;
  const found = schemas.kind(apiVersion, kind);
  const node = found === undefined ? UNTYPED : new SchemaNode(found.schemas, found.schema as ApplySchema);
  byKind.set(cacheKey, node);
  return node;
}

/** A topology from a standalone schema (custom resources with a structural schema, tests). */
export function topologyFromSchema(schema: OpenApiSchema, schemas: SchemaTable = {}): TopologyNode {
  return new SchemaNode(schemas, schema as ApplySchema);
}
