/**
 * The bodies of `/openapi/v3`, `/openapi/v3/<path>` and `/openapi/v2` for the group-versions a
 * Catalogue serves. Built lazily and cached for the life of the instance; the bytes never change
 * for a given catalogue, so the hashes and ETags are stable.
 *
 * v3 follows kube-openapi pkg/handler3 (v1.25): the index maps each document path to
 * `/openapi/v3/<path>?hash=<HASH>`, HASH being the upper-case hex SHA-512 of the document bytes,
 * and the ETag header is that hash in double quotes. Documents are served as compact JSON with
 * Go's escaping; key order follows the stored documents (sorted), so the bytes and hashes differ
 * from a real kube-apiserver's, which clients cannot observe except through the hash value.
 *
 * Only group-version documents are listed. kube-apiserver v1.25 also lists "api", "apis",
 * "apis/<group>", "version", "logs", ".well-known/openid-configuration" and "openid/v1/jwks", but
 * those documents are not in the repository; listing them would send clients to 404s, and
 * kubectl explain and client-go's openapi3 root only use the group-version entries.
 * apiregistration.k8s.io/v1 is left out of v3, as v1.25 did not publish it (openapi-extra/README),
 * but is part of v2, which kube-aggregator merges its own definitions into.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { packagePath } from '../../util';
import { Catalogue, type CatalogueGroupVersion } from '../catalogue';
import { goJsonStringify } from './go-json';
import { buildSwaggerV2 } from './swagger-v2';
import type { JsonObject } from '../object';

export interface OpenApiV3DocumentBody {
  body: Buffer;
  /** The ETag header value: the hash in double quotes. */
  etag: string;
  /** Upper-case hex SHA-512 of body, as in `?hash=`. */
  hash: string;
}

export interface OpenApiBody {
  body: Buffer;
  /** The ETag header value, in double quotes. */
  etag: string;
}

export interface OpenApiV3Index {
  paths: Record<string, { serverRelativeURL: string }>;
}

const OPENAPI_V2_VERSION = 'v1.25.16';

function sha512Hex(body: Buffer): string {
  return createHash('sha512').update(body).digest('hex').toUpperCase();
}

function documentPath(entry: { group: string; version: string }): string {
  return entry.group === '' ? `api/${entry.version}` : `apis/${entry.group}/${entry.version}`;
}

export class OpenApiDocuments {
  private readonly v3Bodies = new Map<string, OpenApiV3DocumentBody>();
  private v3IndexCache: OpenApiV3Index | undefined;
  private v2Cache: OpenApiBody | undefined;

  constructor(private readonly catalogue: Catalogue) {}

  /** Served group-version entries keyed by their document path ("api/v1", "apis/apps/v1"). */
  private servedEntries(): Map<string, CatalogueGroupVersion> {
    const entries = new Map<string, CatalogueGroupVersion>();
    for (const gv of this.catalogue.groupVersions()) {
      const entry = this.catalogue.groupVersionEntry(gv.group, gv.version);
      if (entry !== undefined) entries.set(documentPath(entry), entry);
    }
    return entries;
  }

  private static readDocument(entry: CatalogueGroupVersion): JsonObject {
    return JSON.parse(readFileSync(packagePath('src', 'apis', 'data', entry.openApiDocument), 'utf8')) as JsonObject;
  }

  /** The body of `GET /openapi/v3`, with paths sorted as Go marshals a map. */
  v3Index(): OpenApiV3Index {
    if (this.v3IndexCache !== undefined) return this.v3IndexCache;
    const paths: Record<string, { serverRelativeURL: string }> = {};
    const served = this.servedEntries();
    for (const path of [...served.keys()].sort()) {
      const document = this.v3Document(path);
      if (document === undefined) continue;
      paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${document.hash}` };
    }
    this.v3IndexCache = { paths };
    return this.v3IndexCache;
  }

  /** `GET /openapi/v3` as bytes with its ETag. */
  v3IndexBody(): OpenApiBody {
    const body = Buffer.from(goJsonStringify(this.v3Index()));
    return { body, etag: `"${sha512Hex(body)}"` };
  }

  /**
   * @param path the document path after `/openapi/v3/`, e.g. "apis/apps/v1" (a leading slash is accepted)
   * @returns undefined when the group-version is not served over OpenAPI v3: the caller answers 404
   */
  v3Document(path: string): OpenApiV3DocumentBody | undefined {
    const key = path.replace(/^\/+/, '');
    const cached = this.v3Bodies.get(key);
    if (cached !== undefined) return cached;
    const entry = this.servedEntries().get(key);
    if (entry === undefined || !entry.openApiServed) return undefined;
    const body = Buffer.from(goJsonStringify(OpenApiDocuments.readDocument(entry)));
    const hash = sha512Hex(body);
    const document = { body, etag: `"${hash}"`, hash };
    this.v3Bodies.set(key, document);
    return document;
  }

  /** `GET /openapi/v2`: swagger 2.0 built from the served group-versions' v3 documents. */
  v2Document(): OpenApiBody {
    if (this.v2Cache !== undefined) return this.v2Cache;
    const documents = [...this.servedEntries().values()].map((entry) => OpenApiDocuments.readDocument(entry));
    const body = Buffer.from(goJsonStringify(buildSwaggerV2(documents, { version: OPENAPI_V2_VERSION })));
    this.v2Cache = { body, etag: `"${sha512Hex(body)}"` };
    return this.v2Cache;
  }
}

let defaultDocuments: OpenApiDocuments | undefined;

function documentsFor(catalogue: Catalogue | undefined): OpenApiDocuments {
  if (catalogue !== undefined) return new OpenApiDocuments(catalogue);
  defaultDocuments ??= new OpenApiDocuments(Catalogue.load());
  return defaultDocuments;
}

/** `/openapi/v3` of a default v1.25 server, or of `catalogue` (uncached; keep an OpenApiDocuments instead). */
export function openApiV3Index(catalogue?: Catalogue): OpenApiV3Index {
  return documentsFor(catalogue).v3Index();
}

export function openApiV3Document(path: string, catalogue?: Catalogue): OpenApiV3DocumentBody | undefined {
  return documentsFor(catalogue).v3Document(path);
}

export function openApiV2Document(catalogue?: Catalogue): OpenApiBody {
  return documentsFor(catalogue).v2Document();
}
