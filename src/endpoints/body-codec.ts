/**
 * Request and response bodies in the three representations of built-in types. JSON and YAML are
 * handled here; Protobuf is plugged in (src/codec) as a `ProtobufObjectCodec`. YAML request
 * bodies are decoded by a `YamlBodyReader` (the server's runs on a worker thread: a YAML body
 * costs up to seconds to parse, src/codec/yaml-body-decoder.ts), so decodeRequest is async.
 * Encoding keeps the object's field order: the callers give objects in kube's (src/apis/field-order).
 */
import { YamlCodecError, decodeYaml, fromYaml, toYaml, type DecodedYaml } from '../codec';
import { MAX_BODY_DEPTH, errors, nestsDeeperThan } from '../util';
import { goJsonStringify } from '../apis/openapi/go-json';
import type { Representation } from './negotiation';
import { MAX_REQUEST_BODY_BYTES } from './request-context';
import type { JsonObject } from '../apis/object';

export interface ProtobufObjectCodec {
  supports(apiVersion: string, kind: string): boolean;
  encode(object: JsonObject): Buffer;
  decode(body: Uint8Array): JsonObject;
}

/** Decodes YAML request bodies (src/codec YamlBodyDecoder, or in this thread). */
export interface YamlBodyReader {
  decode(text: string, withDuplicateKeys: boolean): Promise<DecodedYaml>;
}

const inThreadYaml: YamlBodyReader = { decode: async (text, withDuplicateKeys) => decodeYaml(text, withDuplicateKeys) };

export class BodyCodec {
  constructor(
    readonly protobuf?: ProtobufObjectCodec,
    private readonly yaml: YamlBodyReader = inThreadYaml,
  ) {}

  protobufSupports(apiVersion: string, kind: string): boolean {
    return this.protobuf !== undefined && this.protobuf.supports(apiVersion, kind);
  }

  /** Decodes a request body into an object; a 400 BadRequest names what was wrong with it. */
  decode(representation: Representation, body: Buffer): JsonObject {
    let value: unknown;
    if (representation === 'protobuf') {
      if (this.protobuf === undefined) throw errors.unsupportedMediaType(['application/json', 'application/yaml']);
      try {
        value = this.protobuf.decode(body);
      } catch (err) {
        throw errors.badRequest(`the object provided is unrecognized: ${(err as Error).message}`);
      }
    } else if (representation === 'yaml') {
      try {
        value = fromYaml(body.toString('utf8'));
      } catch (err) {
        throw yamlBodyError(err);
      }
    } else {
      try {
        value = JSON.parse(body.toString('utf8'));
      } catch (err) {
        throw errors.badRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
      }
    }
    return requestObject(value);
  }

  /**
   * Decodes a request body as `decode` does, a YAML one through the YAML reader (with its
   * duplicate keys, for strict field validation, when `withYamlDuplicateKeys`).
   */
  async decodeRequest(representation: Representation, body: Buffer, withYamlDuplicateKeys = false): Promise<{ object: JsonObject; yamlDuplicateKeysError?: string; yamlAsJson?: string }> {
    if (representation !== 'yaml') return { object: this.decode(representation, body) };
    const decoded = await this.decodeYamlText(body.toString('utf8'), withYamlDuplicateKeys);
    return { object: requestObject(decoded.value), yamlDuplicateKeysError: decoded.duplicateKeysError, yamlAsJson: decoded.json };
  }

  /** The value of a YAML text through the YAML reader; its errors are YamlCodecErrors turned into API errors by the caller. */
  async decodeYamlText(text: string, withDuplicateKeys = false): Promise<{ value: unknown; duplicateKeysError?: string; json: string }> {
    let decoded: DecodedYaml;
    try {
      decoded = await this.yaml.decode(text, withDuplicateKeys);
    } catch (err) {
      throw yamlBodyError(err);
    }
    return { value: JSON.parse(decoded.json) as unknown, duplicateKeysError: decoded.duplicateKeysError, json: decoded.json };
  }

  encode(representation: Representation, object: JsonObject, pretty: boolean): Buffer {
    if (representation === 'protobuf') {
      if (this.protobuf === undefined) throw errors.internal(new Error('no Protobuf codec'));
      return this.protobuf.encode(object);
    }
    if (representation === 'yaml') return Buffer.from(toYaml(object), 'utf8');
    // As kube's JSON serializer writes: json.Encoder's compact line, or json.MarshalIndent's two-space
    // indent, which ends without a newline; both escape <, > and & as Go does.
    return Buffer.from(pretty ? goJsonStringify(object, 2) : `${goJsonStringify(object)}\n`, 'utf8');
  }
}

function requestObject(value: unknown): JsonObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw errors.badRequest("couldn't get version/kind; json parse error: the request body is not a JSON object");
  }
  refuseTooDeep(value);
  return value as JsonObject;
}

/**
 * The API error for a YAML body the codec refused: too deep as a JSON body (400), expanding
 * beyond any storable size (413, as the store would answer), otherwise a 400 with the reader's
 * words (yaml.v2's own for excessive aliasing).
 */
export function yamlBodyError(err: unknown): Error {
  if (!(err instanceof YamlCodecError)) return err instanceof Error ? err : new Error(String(err));
  if (err.reason === 'TooDeep') return errors.badRequest(err.message);
  if (err.reason === 'TooLarge') return errors.requestEntityTooLarge(MAX_REQUEST_BODY_BYTES);
  return errors.badRequest(`error converting YAML to JSON: ${err.message}`);
}

/** A 400 for a document nested deeper than any object needs (and than recursive code can walk). */
export function refuseTooDeep(value: unknown): void {
  if (nestsDeeperThan(value, MAX_BODY_DEPTH)) throw errors.badRequest(`the request body nests more than ${MAX_BODY_DEPTH} levels deep`);
}
