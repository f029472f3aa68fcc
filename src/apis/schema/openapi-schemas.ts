/**
 * The Kubernetes v1.25 OpenAPI v3 documents shipped under src/apis/data, read once per process and
 * shared by everything that needs a kind's schema (strategic merge patch, typed decoding).
 *
 * A document is read on first use of its group-version; its kinds are indexed by their single
 * `x-kubernetes-group-version-kind` entry at the same time.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packagePath } from '../../util';

export interface GroupVersionKind { group: string; version: string; kind: string }

/** The parts of an OpenAPI v3 schema object the API server reads. */
export interface OpenApiSchema {
  $ref?: string;
  allOf?: OpenApiSchema[];
  oneOf?: OpenApiSchema[];
  type?: string;
  format?: string;
  properties?: Record<string, OpenApiSchema>;
  additionalProperties?: OpenApiSchema | boolean;
  items?: OpenApiSchema;
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-group-version-kind'?: GroupVersionKind[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

/** components.schemas of one document, by schema name (`io.k8s.api.apps.v1.Deployment`). */
export type SchemaTable = Readonly<Record<string, OpenApiSchema>>;

/** A top-level kind's schema together with the table its `$ref`s resolve in. */
export interface KindSchema {
  readonly name: string;
  readonly schema: OpenApiSchema;
  readonly schemas: SchemaTable;
}

export const SCHEMA_REF_PREFIX = '#/components/schemas/';

interface OpenApiDocument {
  components?: { schemas?: Record<string, OpenApiSchema> };
}

interface LoadedDocument {
  readonly schemas: SchemaTable;
  /** Kind name -> schema name, for the kinds of this document's group-version. */
  readonly kinds: ReadonlyMap<string, string>;
}

/** Follows `$ref` and single-member `allOf` wrappers, the only indirections the documents use. */
export function resolveSchema(schemas: SchemaTable, schema: OpenApiSchema): { schema: OpenApiSchema; name?: string } {
  let current = schema;
  let name: string | undefined;
  for (let depth = 0; depth < 16; depth++) {
    if (current.$ref !== undefined && current.$ref.startsWith(SCHEMA_REF_PREFIX)) {
      name = current.$ref.slice(SCHEMA_REF_PREFIX.length);
      const target = schemas[name];
      if (target === undefined) return { schema: {}, name };
      current = target;
    } else if (current.allOf !== undefined && current.allOf.length === 1 && current.properties === undefined) {
      current = current.allOf[0] as OpenApiSchema;
    } else {
      break;
    }
  }
  return name === undefined ? { schema: current } : { schema: current, name };
}

/** Splits `apps/v1` into group and version; undefined for malformed apiVersions. */
export function splitApiVersion(apiVersion: string): { group: string; version: string } | undefined {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  if (version === '' || version.includes('/')) return undefined;
  return { group, version };
}

let shared: OpenApiSchemas | undefined;

export class OpenApiSchemas {
  private readonly documents = new Map<string, LoadedDocument | null>();

  private constructor(private readonly directories: readonly string[]) {}

  /** The process-wide set over the shipped documents (v1.25 first, then the extra ones). */
  static shared(): OpenApiSchemas {
    shared ??= new OpenApiSchemas([packagePath('src', 'apis', 'data', 'openapi-v3'), packagePath('src', 'apis', 'data', 'openapi-extra')]);
    return shared;
  }

  /** A set over documents in other folders (tests, or a server started with extra APIs); earlier folders win. */
  static fromDirectories(directories: readonly string[]): OpenApiSchemas {
    return new OpenApiSchemas(directories);
  }

  /** components.schemas of the group-version's document, or undefined when none is shipped. */
  schemasFor(group: string, version: string): SchemaTable | undefined {
    return this.documentFor(group, version)?.schemas;
  }

  /**
   * The schema of a top-level kind, or undefined when no document describes it (custom resources,
   * versions Kubernetes v1.25 does not serve).
   */
  kind(apiVersion: string, kind: string): KindSchema | undefined {
    const gv = splitApiVersion(apiVersion);
    if (gv === undefined) return undefined;
    const document = this.documentFor(gv.group, gv.version);
    if (document === undefined) return undefined;
    const name = document.kinds.get(kind);
    if (name === undefined) return undefined;
    return { name, schema: document.schemas[name] as OpenApiSchema, schemas: document.schemas };
  }

  private documentFor(group: string, version: string): LoadedDocument | undefined {
    const fileName = group === '' ? `api__${version}_openapi.json` : `apis__${group}__${version}_openapi.json`;
    if (!this.documents.has(fileName)) this.documents.set(fileName, this.load(fileName, group, version));
    return this.documents.get(fileName) ?? undefined;
  }

  private load(fileName: string, group: string, version: string): LoadedDocument | null {
    for (const directory of this.directories) {
      const path = join(directory, fileName);
      if (!existsSync(path)) continue;
      const document = JSON.parse(readFileSync(path, 'utf8')) as OpenApiDocument;
      const schemas: SchemaTable = document.components?.schemas ?? {};
      const kinds = new Map<string, string>();
      for (const name of Object.keys(schemas)) {
        const gvks = (schemas[name] as OpenApiSchema)['x-kubernetes-group-version-kind'];
        // Shared types such as DeleteOptions list many kinds; a kind's own schema lists exactly one.
        const gvk = gvks?.length === 1 ? gvks[0] : undefined;
        if (gvk !== undefined && gvk.group === group && gvk.version === version && !kinds.has(gvk.kind)) kinds.set(gvk.kind, name);
      }
      return { schemas, kinds };
    }
    return null;
  }
}
