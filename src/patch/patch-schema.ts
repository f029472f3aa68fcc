/**
 * Where strategic merge patch learns how to merge each field: `x-kubernetes-patch-strategy` and
 * `x-kubernetes-patch-merge-key` in the Kubernetes v1.25 OpenAPI v3 documents shipped under
 * src/apis/data. kube-apiserver reads the same facts from Go struct tags (`patchStrategy`,
 * `patchMergeKey`), from which those extensions are generated.
 *
 * Documents are read on first use of their group-version, and the node for a kind is built once;
 * child nodes resolve `$ref`/`allOf` lazily as the merge walks into a field.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packagePath } from '../util';

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

interface SchemaObject {
  $ref?: string;
  allOf?: SchemaObject[];
  properties?: Record<string, SchemaObject>;
  additionalProperties?: SchemaObject | boolean;
  items?: SchemaObject;
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-group-version-kind'?: Array<{ group: string; version: string; kind: string }>;
}

interface OpenApiDocument {
  components?: { schemas?: Record<string, SchemaObject> };
}

const NO_META: PatchMeta = Object.freeze({ strategies: Object.freeze([]) as readonly string[], mergeKey: '' });
const NOTHING_KNOWN: PatchLookup = Object.freeze({ schema: undefined, meta: NO_META });
const REF_PREFIX = '#/components/schemas/';

/** One schema of a document, seen as the merge sees a Go type. */
export class PatchSchemaNode {
  private readonly fieldCache = new Map<string, PatchLookup>();

  constructor(
    private readonly schemas: Record<string, SchemaObject>,
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
    const resolved = resolve(this.schemas, schema);
    return new PatchSchemaNode(this.schemas, resolved.schema, resolved.name ?? fallbackName);
  }
}

function metaOf(property: SchemaObject): PatchMeta {
  const strategy = property['x-kubernetes-patch-strategy'];
  const mergeKey = property['x-kubernetes-patch-merge-key'];
  if (strategy === undefined && mergeKey === undefined) return NO_META;
  return { strategies: strategy === undefined || strategy === '' ? [] : strategy.split(','), mergeKey: mergeKey ?? '' };
}

/** Follows `$ref` and single-member `allOf` wrappers, the only indirections the documents use. */
function resolve(schemas: Record<string, SchemaObject>, schema: SchemaObject): { schema: SchemaObject; name?: string } {
  let current = schema;
  let name: string | undefined;
  for (let depth = 0; depth < 16; depth++) {
    if (current.$ref !== undefined && current.$ref.startsWith(REF_PREFIX)) {
      name = current.$ref.slice(REF_PREFIX.length);
      const target = schemas[name];
      if (target === undefined) return { schema: {}, name };
      current = target;
    } else if (current.allOf !== undefined && current.allOf.length === 1 && current.properties === undefined) {
      current = current.allOf[0] as SchemaObject;
    } else {
      break;
    }
  }
  return name === undefined ? { schema: current } : { schema: current, name };
}

/** The folders holding the documents, newest rules first. */
function defaultDirectories(): string[] {
  return [packagePath('src', 'apis', 'data', 'openapi-v3'), packagePath('src', 'apis', 'data', 'openapi-extra')];
}

let sharedSchema: PatchSchema | undefined;

export class PatchSchema {
  private readonly documents = new Map<string, Record<string, SchemaObject> | null>();
  private readonly kinds = new Map<string, PatchSchemaNode | null>();

  private constructor(private readonly directories: readonly string[]) {}

  /** The process-wide lookup over the shipped documents; nothing is read until a kind is asked for. */
  static load(): PatchSchema {
    sharedSchema ??= new PatchSchema(defaultDirectories());
    return sharedSchema;
  }

  /** A lookup over documents in other folders (tests, or a server started with extra APIs). */
  static fromDirectories(directories: readonly string[]): PatchSchema {
    return new PatchSchema(directories);
  }

  /**
   * The merge rules for a top-level kind, or undefined when no document describes it, e.g. a
   * custom resource (kube rejects strategic merge patch for those with 415 before any merging).
   */
  forKind(apiVersion: string, kind: string): PatchSchemaNode | undefined {
    const cacheKey = `${apiVersion}/${kind}`;
    const cached = this.kinds.get(cacheKey);
    if (cached !== undefined) return cached ?? undefined;
    const node = this.findKind(apiVersion, kind);
    this.kinds.set(cacheKey, node ?? null);
    return node;
  }

  private findKind(apiVersion: string, kind: string): PatchSchemaNode | undefined {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    if (version === '' || version.includes('/')) return undefined;
    const schemas = this.documentFor(group, version);
    if (schemas === undefined) return undefined;
    for (const name of Object.keys(schemas)) {
      const schema = schemas[name] as SchemaObject;
      const gvks = schema['x-kubernetes-group-version-kind'];
      // Shared types such as DeleteOptions list many kinds; a kind's own schema lists exactly one.
      if (gvks?.length === 1 && gvks[0]?.group === group && gvks[0].version === version && gvks[0].kind === kind) {
        return new PatchSchemaNode(schemas, schema, name);
      }
    }
    return undefined;
  }

  private documentFor(group: string, version: string): Record<string, SchemaObject> | undefined {
    const fileName = group === '' ? `api__${version}_openapi.json` : `apis__${group}__${version}_openapi.json`;
    if (!this.documents.has(fileName)) {
      let schemas: Record<string, SchemaObject> | null = null;
      for (const directory of this.directories) {
        const path = join(directory, fileName);
        if (!existsSync(path)) continue;
        const document = JSON.parse(readFileSync(path, 'utf8')) as OpenApiDocument;
        schemas = document.components?.schemas ?? {};
        break;
      }
      this.documents.set(fileName, schemas);
    }
    return this.documents.get(fileName) ?? undefined;
  }
}
