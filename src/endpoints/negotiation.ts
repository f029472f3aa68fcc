/**
 * Content negotiation as kube-apiserver v1.25 does it: `Accept` picks the response
 * representation in the client's order (entries with parameters the server does not serve,
 * such as `as=Table` or aggregated discovery's `as=APIGroupDiscoveryList`, are skipped so the
 * client falls back to the next one); `Content-Type` names the request body's representation.
 * A media type's `pretty=1` (that value only, as acceptMediaTypeOptions reads it) asks for
 * indented JSON; the query and the User-Agent may too (response-writer.ts, isPrettyPrint).
 */
import { errors } from '../util';

export const JSON_MEDIA_TYPE = 'application/json';
export const YAML_MEDIA_TYPE = 'application/yaml';
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
export const SUPPORTED_MEDIA_TYPES = [JSON_MEDIA_TYPE, YAML_MEDIA_TYPE, PROTOBUF_MEDIA_TYPE];

export type Representation = 'json' | 'yaml' | 'protobuf';

export interface MediaRange {
  type: string;
  subtype: string;
  params: Record<string, string>;
  /** The quality factor (q=), 1 when absent. */
  quality: number;
}

export function parseMediaRanges(header: string | undefined): MediaRange[] {
  if (header === undefined || header.trim() === '') return [];
  const ranges: MediaRange[] = [];
  for (const part of header.split(',')) {
    const [typePart, ...paramParts] = part.split(';');
    const [type, subtype] = typePart.trim().toLowerCase().split('/');
    if (!type || !subtype) continue;
    const params: Record<string, string> = {};
    let quality = 1;
    for (const p of paramParts) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const name = p.slice(0, eq).trim().toLowerCase();
      const value = p.slice(eq + 1).trim().replace(/^"|"$/g, '');
      if (name === 'q') {
        const q = Number(value);
        quality = Number.isFinite(q) ? Math.min(1, Math.max(0, q)) : 1;
      } else {
        params[name] = value;
      }
    }
    ranges.push({ type, subtype, params, quality });
  }
  // Highest quality first; among equals the client's order (a stable sort), as goautoneg does.
  return ranges.filter((r) => r.quality > 0).sort((a, b) => b.quality - a.quality);
}

export interface ResponseChoice {
  representation: Representation;
  pretty: boolean;
  /** Set when the client asked for a meta.k8s.io Table (JSON only, as in v1.25) and the caller can render one. */
  table?: 'meta.k8s.io/v1' | 'meta.k8s.io/v1beta1';
  /**
   * Set when the client asked for metadata only (client-go's metadata informers):
   * `as=PartialObjectMetadata` or `as=PartialObjectMetadataList`, of meta.k8s.io v1 or v1beta1.
   */
  partial?: { kind: 'PartialObjectMetadata' | 'PartialObjectMetadataList'; apiVersion: 'meta.k8s.io/v1' | 'meta.k8s.io/v1beta1' };
}

const PARTIAL_KINDS = new Set(['PartialObjectMetadata', 'PartialObjectMetadataList']);

/**
 * The representation for a response. `protobufAllowed` is false for documents that have no
 * Protobuf form (discovery is JSON-only in v1.25 when asked for it as JSON, custom resources).
 */
export function negotiateResponse(accept: string | undefined, protobufAllowed: boolean, tableAllowed = false, partialAllowed = false): ResponseChoice {
  const ranges = parseMediaRanges(accept);
  if (ranges.length === 0) return { representation: 'json', pretty: false };
  for (const range of ranges) {
    const metaVersion = range.params.g === 'meta.k8s.io' && (range.params.v === 'v1' || range.params.v === 'v1beta1') ? range.params.v : undefined;
    if (range.params.as === 'Table' && tableAllowed && `${range.type}/${range.subtype}` === JSON_MEDIA_TYPE && metaVersion !== undefined) {
      return { representation: 'json', pretty: range.params.pretty === '1', table: `meta.k8s.io/${metaVersion}` };
    }
    if (partialAllowed && PARTIAL_KINDS.has(range.params.as ?? '') && metaVersion !== undefined) {
      const full = `${range.type}/${range.subtype}`;
      const partial = { kind: range.params.as as 'PartialObjectMetadata' | 'PartialObjectMetadataList', apiVersion: `meta.k8s.io/${metaVersion}` as const };
      const pretty = range.params.pretty === '1';
      if (full === JSON_MEDIA_TYPE) return { representation: 'json', pretty, partial };
      if (full === YAML_MEDIA_TYPE) return { representation: 'yaml', pretty, partial };
      // meta.k8s.io's types always have a Protobuf form (v1; v1beta1 is the same message under another version).
      if (full === PROTOBUF_MEDIA_TYPE && metaVersion === 'v1') return { representation: 'protobuf', pretty: false, partial };
      continue;
    }
    // Conversions the server does not offer (aggregated discovery, ...) are skipped.
    if (range.params.as !== undefined) continue;
    const pretty = range.params.pretty === '1';
    const full = `${range.type}/${range.subtype}`;
    if (full === JSON_MEDIA_TYPE || full === 'application/*' || full === '*/*') return { representation: 'json', pretty };
    if (full === YAML_MEDIA_TYPE) return { representation: 'yaml', pretty };
    if (full === PROTOBUF_MEDIA_TYPE && protobufAllowed) return { representation: 'protobuf', pretty: false };
  }
  throw errors.notAcceptable(protobufAllowed ? SUPPORTED_MEDIA_TYPES : [JSON_MEDIA_TYPE, YAML_MEDIA_TYPE]);
}

/** The representation of a request body, or 415 (also for a Content-Type that is no media type at all). */
export function requestRepresentation(contentType: string | undefined, protobufAllowed: boolean): Representation {
  const accepted = protobufAllowed ? SUPPORTED_MEDIA_TYPES : [JSON_MEDIA_TYPE, YAML_MEDIA_TYPE];
  if (contentType === undefined || contentType.trim() === '') return 'json';
  const range = parseMediaRanges(contentType)[0];
  if (range === undefined) throw errors.unsupportedMediaType(accepted);
  const full = `${range.type}/${range.subtype}`;
  if (full === JSON_MEDIA_TYPE) return 'json';
  if (full === YAML_MEDIA_TYPE) return 'yaml';
  if (full === PROTOBUF_MEDIA_TYPE && protobufAllowed) return 'protobuf';
  throw errors.unsupportedMediaType(accepted);
}

export function mediaTypeOf(representation: Representation): string {
  return representation === 'json' ? JSON_MEDIA_TYPE : representation === 'yaml' ? YAML_MEDIA_TYPE : PROTOBUF_MEDIA_TYPE;
}
