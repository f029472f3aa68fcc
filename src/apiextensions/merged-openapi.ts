/**
 * The OpenAPI documents a server with CRDs serves: the built-in ones (src/apis/openapi) with the
 * custom group-versions added: their v3 documents (custom-openapi.ts) and index entries, and
 * their v2 definitions (built for v2, as v1.25 filters them) merged into v2 (JSON and gnostic
 * Protobuf). Rebuilt only when the set of served CRDs changes (the index's revision), so a
 * server without CRDs serves the built-in bytes.
 */
import { createHash } from 'node:crypto';
import { goJsonStringify, type OpenApiDocuments } from '../apis/openapi';
import { OPENAPI_V2_PROTOBUF_CONTENT_TYPE, openApiV2ToProtobuf } from '../apis/openapi/openapi-v2-protobuf';
import { customOpenApiV2Definitions, customOpenApiV3Document, metaSchemasOf } from './custom-openapi';
import type { CustomResourceIndex } from './custom-resource-index';
import type { JsonObject } from '../apis/object';

export class MergedOpenApi {
  private revision = -1;
  private v3 = new Map<string, { body: Buffer; etag: string; hash: string }>();
  private v2Body?: { body: Buffer; etag: string };
  private v2ProtobufBody?: { body: Buffer; etag: string; contentType: string };
  private meta?: JsonObject;

  constructor(private readonly builtIn: OpenApiDocuments, private readonly index: CustomResourceIndex) {}

  private refresh(): void {
    if (this.revision === this.index.revision) return;
    this.revision = this.index.revision;
    this.v2Body = undefined;
    this.v2ProtobufBody = undefined;
    this.v3 = new Map();
    const groupVersions = new Map<string, ReturnType<CustomResourceIndex['servedResources']>>();
    for (const resource of this.index.servedResources()) {
      const path = `apis/${resource.group}/${resource.version}`;
      groupVersions.set(path, [...(groupVersions.get(path) ?? []), resource]);
    }
    if (groupVersions.size === 0) return;
    this.meta ??= metaSchemasOf(JSON.parse(this.builtIn.v3Document('apis/apps/v1')?.body.toString('utf8') ?? '{}') as JsonObject);
    for (const [path, resources] of groupVersions) {
      const body = Buffer.from(goJsonStringify(customOpenApiV3Document(resources, this.meta) as never));
      const hash = createHash('sha512').update(body).digest('hex').toUpperCase();
      this.v3.set(path, { body, etag: `"${hash}"`, hash });
    }
  }

  v3Index(): JsonObject {
    this.refresh();
    const builtIn = this.builtIn.v3Index();
    if (this.v3.size === 0) return builtIn as unknown as JsonObject;
    const paths: Record<string, { serverRelativeURL: string }> = { ...builtIn.paths };
    for (const [path, document] of this.v3) if (paths[path] === undefined) paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${document.hash}` };
    const sorted: Record<string, { serverRelativeURL: string }> = {};
    for (const path of Object.keys(paths).sort()) sorted[path] = paths[path];
    return { paths: sorted };
  }

  v3Document(path: string): { body: Buffer; etag: string } | undefined {
    this.refresh();
    return this.v3.get(path.replace(/^\/+/, ''));
  }

  v2(): { body: Buffer; etag: string } {
    this.refresh();
    const builtIn = this.builtIn.v2Document();
    if (this.v3.size === 0) return builtIn;
    if (this.v2Body === undefined) {
      const document = JSON.parse(builtIn.body.toString('utf8')) as { definitions: Record<string, unknown> };
      const definitions: Record<string, unknown> = { ...document.definitions };
      // Built from the CRDs as v1.25 builds v2 (no anyOf, oneOf, allOf, not or defaults), not
      // from the v3 documents: gnostic's v2 Schema has no place for those, and the Protobuf form
      // would fail. The meta.k8s.io definitions they refer to are the built-in ones.
      for (const [name, schema] of Object.entries(customOpenApiV2Definitions(this.index.servedResources()))) {
        if (definitions[name] === undefined) definitions[name] = schema;
      }
      const sorted: Record<string, unknown> = {};
      for (const name of Object.keys(definitions).sort()) sorted[name] = definitions[name];
      const body = Buffer.from(goJsonStringify({ ...document, definitions: sorted } as never));
      this.v2Body = { body, etag: `"${createHash('sha512').update(body).digest('hex').toUpperCase()}"` };
    }
    return this.v2Body;
  }

  v2Protobuf(): { body: Buffer; etag: string; contentType: string } {
    const json = this.v2();
    if (this.v2ProtobufBody === undefined || this.v2ProtobufBody.etag !== json.etag) {
      this.v2ProtobufBody = { body: openApiV2ToProtobuf(json.body), etag: json.etag, contentType: OPENAPI_V2_PROTOBUF_CONTENT_TYPE };
    }
    return this.v2ProtobufBody;
  }
}
