/**
 * The OpenAPI of aggregated APIs (kube-aggregator's OpenAPI aggregation controllers in v1.25):
 * each available extension server's /openapi/v2 (its paths and definitions added to Carina's
 * own, never replacing one Carina defines) and its /openapi/v3 documents for its group-versions
 * (listed in Carina's /openapi/v3 index, served from here). Specs are fetched when the
 * availability check passes, at most once a minute per APIService, and kept while it exists,
 * as kube keeps the last spec it downloaded.
 */
import { createHash } from 'node:crypto';
import { goJsonStringify } from '../apis/openapi';
import { OPENAPI_V2_PROTOBUF_CONTENT_TYPE, openApiV2ToProtobuf } from '../apis/openapi/openapi-v2-protobuf';
import { sendToBackend, type ProxyTransport } from '../proxy';
import type { JsonObject } from '../apis/object';

interface ExtensionSpecs {
  v2?: { paths: JsonObject; definitions: JsonObject };
  v3: Map<string, { body: Buffer; etag: string; hash: string }>;
  fetchedAt: number;
}

const REFETCH_AFTER_MS = 60_000;

async function fetchJson(base: URL, path: string, transport: ProxyTransport): Promise<{ body: Buffer; json: JsonObject } | undefined> {
  const response = await sendToBackend({ method: 'GET', target: new URL(path, base), headers: { accept: 'application/json', 'x-remote-user': 'system:kube-aggregator', 'x-remote-group': 'system:masters' }, transport });
  const chunks: Buffer[] = [];
  for await (const chunk of response.body) chunks.push(chunk as Buffer);
  if (response.status !== 200) return undefined;
  const body = Buffer.concat(chunks);
  return { body, json: JSON.parse(body.toString('utf8')) as JsonObject };
}

function etagOf(body: Buffer): { etag: string; hash: string } {
  const hash = createHash('sha512').update(body).digest('hex').toUpperCase();
  return { etag: `"${hash}"`, hash };
}

export class AggregatedOpenApi {
  private readonly specs = new Map<string, ExtensionSpecs>();
  private revision = 0;
  private mergedFor = -1;
  private v2Merged?: { body: Buffer; etag: string };
  private v2Protobuf?: { body: Buffer; etag: string; contentType: string };

  /** Downloads an available APIService's specs (unless fetched within the last minute). */
  async refresh(name: string, group: string, version: string, base: URL, transport: ProxyTransport): Promise<void> {
    const known = this.specs.get(name);
    if (known !== undefined && Date.now() - known.fetchedAt < REFETCH_AFTER_MS) return;
    const specs: ExtensionSpecs = { v3: new Map(), fetchedAt: Date.now() };
    const v2 = await fetchJson(base, '/openapi/v2', transport).catch(() => undefined);
    if (v2 !== undefined) specs.v2 = { paths: (v2.json.paths ?? {}) as JsonObject, definitions: (v2.json.definitions ?? {}) as JsonObject };
    const index = await fetchJson(base, '/openapi/v3', transport).catch(() => undefined);
    const paths = (index?.json.paths ?? {}) as Record<string, { serverRelativeURL?: string }>;
    const own = `apis/${group}/${version}`;
    if (paths[own] !== undefined) {
      const document = await fetchJson(base, paths[own].serverRelativeURL ?? `/openapi/v3/${own}`, transport).catch(() => undefined);
      if (document !== undefined) specs.v3.set(own, { body: document.body, ...etagOf(document.body) });
    }
    this.specs.set(name, specs);
    this.revision += 1;
  }

  /** Forgets the specs of APIServices that no longer exist. */
  retain(names: ReadonlySet<string>): void {
    for (const name of [...this.specs.keys()]) {
      if (names.has(name)) continue;
      this.specs.delete(name);
      this.revision += 1;
    }
  }

  private get hasV2(): boolean {
    return [...this.specs.values()].some((s) => s.v2 !== undefined);
  }

  v2(builtIn: { body: Buffer; etag: string }): { body: Buffer; etag: string } {
    if (!this.hasV2) return builtIn;
    if (this.mergedFor !== this.revision || this.v2Merged === undefined) {
      const document = JSON.parse(builtIn.body.toString('utf8')) as { paths: JsonObject; definitions: JsonObject };
      const paths: JsonObject = { ...document.paths };
      const definitions: JsonObject = { ...document.definitions };
      for (const specs of this.specs.values()) {
        for (const [path, item] of Object.entries(specs.v2?.paths ?? {})) if (paths[path] === undefined) paths[path] = item;
        for (const [name, schema] of Object.entries(specs.v2?.definitions ?? {})) if (definitions[name] === undefined) definitions[name] = schema;
      }
      const sorted = (object: JsonObject) => Object.fromEntries(Object.keys(object).sort().map((key) => [key, object[key]]));
      const body = Buffer.from(goJsonStringify({ ...document, paths: sorted(paths), definitions: sorted(definitions) }));
      this.v2Merged = { body, etag: etagOf(body).etag };
      this.mergedFor = this.revision;
    }
    return this.v2Merged;
  }

  v2AsProtobuf(builtIn: { body: Buffer; etag: string }, builtInProtobuf: () => { body: Buffer; etag: string; contentType: string }): { body: Buffer; etag: string; contentType: string } {
    if (!this.hasV2) return builtInProtobuf();
    const json = this.v2(builtIn);
    if (this.v2Protobuf?.etag !== json.etag) this.v2Protobuf = { body: openApiV2ToProtobuf(json.body), etag: json.etag, contentType: OPENAPI_V2_PROTOBUF_CONTENT_TYPE };
    return this.v2Protobuf;
  }

  v3Index(builtIn: JsonObject): JsonObject {
    const extra = [...this.specs.values()].flatMap((s) => [...s.v3.entries()]);
    if (extra.length === 0) return builtIn;
    const paths: Record<string, unknown> = { ...((builtIn.paths ?? {}) as JsonObject) };
    for (const [path, document] of extra) if (paths[path] === undefined) paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${document.hash}` };
    return { ...builtIn, paths: Object.fromEntries(Object.keys(paths).sort().map((key) => [key, paths[key]])) };
  }

  v3Document(path: string): { body: Buffer; etag: string } | undefined {
    const wanted = path.replace(/^\/+/, '');
    for (const specs of this.specs.values()) {
      const found = specs.v3.get(wanted);
      if (found !== undefined) return found;
    }
    return undefined;
  }
}
