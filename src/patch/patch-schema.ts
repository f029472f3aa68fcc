/**
 * Where strategic merge patch learns how to merge each field: `x-kubernetes-patch-strategy` and
 * `x-kubernetes-patch-merge-key` in the Kubernetes v1.25 OpenAPI v3 documents shipped under
 * src/apis/data. kube-apiserver reads the same facts from Go struct tags (`patchStrategy`,
 * `patchMergeKey`), from which those extensions are generated.
 *
 * Documents are read through the shared OpenApiSchemas (once per process), and the node for a kind is built once;
 * child nodes resolve `$ref`/`allOf` lazily as the merge walks into a field.
 *
 * Lookups are lenient, except where a `$setElementOrder` directive names the list: there a name the
 * Go struct lacks, or a map whose values are not lists, fails as kube's reflection-based lookup does.
 */
import { goStructName } from '../apis/schema';
import { OpenApiSchemas, resolveSchema, type OpenApiSchema, type SchemaTable } from '../apis/schema/openapi-schemas';
import { goQuote } from '../apis/validation';

/** A field lookup kube's strategicpatch refuses (a plain error: kube-apiserver answers 500). */
export class PatchLookupError extends Error {
  override name = 'PatchLookupError';
}

/** What the struct tags say about one field. */
export interface PatchMeta {
  /** e.g. ['merge'], ['retainKeys'], ['merge', 'retainKeys']; empty when the field has none. */
  readonly strategies: readonly string[];
  /** The member that identifies list items, e.g. 'name' for containers; '' when none. */
  readonly mergeKey: string;
}

export interface PatchLookup {
  /** The schema of the field's value (for lists: of one item); undefined when unknown. */
  readonly schema: PatchSchemaNode | undefined;
  readonly meta: PatchMeta;
}

type SchemaObject = OpenApiSchema;

const NO_META: PatchMeta = Object.freeze({ strategies: Object.freeze([]) as readonly string[], mergeKey: '' });
const NOTHING_KNOWN: PatchLookup = Object.freeze({ schema: undefined, meta: NO_META });

/** One schema of a document, seen as the merge sees a Go type. */
export class PatchSchemaNode {
  private readonly fieldCache = new Map<string, PatchLookup>();

  constructor(
    private readonly schemas: SchemaTable,
    private readonly schema: SchemaObject,
    /** The schema name, for messages. */
    readonly name: string,
  ) {}

  /** The field `key` of this object (for a map type: any key), like LookupPatchMetadataForStruct. */
  lookupForStruct(key: string): PatchLookup {
    const cached = this.fieldCache.get(key);
    if (cached !== undefined) return cached;
    const lookup = this.computeFieldLookup(key);
    this.fieldCache.set(key, lookup);
    return lookup;
  }

  /**
   * The list a `$setElementOrder/<key>` directive orders (LookupPatchMetadataForSlice on the Go
   * type). The struct's field names match case-insensitively when none matches exactly, as Go's JSON
   * field lookup does. Schemas that say nothing of their members (RawExtension, free-form maps)
   * are not checked.
   */
  lookupListToOrder(key: string): PatchLookup {
    const properties = this.schema.properties;
    if (properties !== undefined) {
      if (Object.prototype.hasOwnProperty.call(properties, key)) return this.lookupForSlice(key);
      const folded = key.toLowerCase();
      const match = Object.keys(properties).find((name) => name.toLowerCase() === folded);
      if (match === undefined) {
        throw new PatchLookupError(`unable to find api field in struct ${goStructName(this.name)} for the json field ${goQuote(key)}`);
      }
      return this.lookupForSlice(match);
    }
    const additional = this.schema.additionalProperties;
    if (typeof additional === 'object' && resolveSchema(this.schemas, additional).schema.type !== 'array') {
      throw new PatchLookupError('expected slice or array type, but got: map');
    }
    return this.lookupForSlice(key);
  }

  /** The list field `key`: its meta and the schema of one item, like LookupPatchMetadataForSlice. */
  lookupForSlice(key: string): PatchLookup {
    const field = this.lookupForStruct(key);
    if (field.schema === undefined) return field;
    const items = field.schema.schema.items;
    if (items === undefined) return { schema: undefined, meta: field.meta };
    return { schema: this.nodeFor(items, `${field.schema.name}[]`), meta: field.meta };
  }

  private computeFieldLookup(key: string): PatchLookup {
    const property = this.schema.properties !== undefined && Object.prototype.hasOwnProperty.call(this.schema.properties, key)
      ? this.schema.properties[key]
      : undefined;
    if (property !== undefined) {
      return { schema: this.nodeFor(property, key), meta: metaOf(property) };
    }
    const additional = this.schema.additionalProperties;
    if (typeof additional === 'object') return { schema: this.nodeFor(additional, `${this.name}{}`), meta: NO_META };
    return NOTHING_KNOWN;
  }

  private nodeFor(schema: SchemaObject, fallbackName: string): PatchSchemaNode {
    const resolved = resolveSchema(this.schemas, schema);
    return new PatchSchemaNode(this.schemas, resolved.schema, resolved.name ?? fallbackName);
  }
}

function metaOf(property: SchemaObject): PatchMeta {
  const strategy = property['x-kubernetes-patch-strategy'];
  const mergeKey = property['x-kubernetes-patch-merge-key'];
  if (strategy === undefined && mergeKey === undefined) return NO_META;
  return { strategies: strategy === undefined || strategy === '' ? [] : strategy.split(','), mergeKey: mergeKey ?? '' };
}

let sharedSchema: PatchSchema | undefined;

export class PatchSchema {
  private readonly kinds = new Map<string, PatchSchemaNode | null>();

  private constructor(private readonly documents: OpenApiSchemas) {}

  /** The process-wide lookup over the shipped documents; nothing is read until a kind is asked for. */
  static load(): PatchSchema {
    sharedSchema ??= new PatchSchema(OpenApiSchemas.shared());
    return sharedSchema;
  }

  /** A lookup over documents in other folders (tests, or a server started with extra APIs). */
  static fromDirectories(directories: readonly string[]): PatchSchema {
    return new PatchSchema(OpenApiSchemas.fromDirectories(directories));
  }

  /**
   * The merge rules for a top-level kind, or undefined when no document describes it, e.g. a
   * custom resource (kube rejects strategic merge patch for those with 415 before any merging).
   */
  forKind(apiVersion: string, kind: string): PatchSchemaNode | undefined {
    const cacheKey = `${apiVersion}/${kind}`;
    const cached = this.kinds.get(cacheKey);
    if (cached !== undefined) return cached ?? undefined;
    const found = this.documents.kind(apiVersion, kind);
    const node = found === undefined ? undefined : new PatchSchemaNode(found.schemas, found.schema, found.name);
    this.kinds.set(cacheKey, node ?? null);
    return node;
  }
}
