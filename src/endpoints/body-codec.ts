/**
 * Request and response bodies in the three representations of built-in types. JSON and YAML are
 * handled here; Protobuf is plugged in (src/codec) as a `ProtobufObjectCodec`.
 */
import { fromYaml, toYaml } from '../codec';
import { MAX_BODY_DEPTH, errors, nestsDeeperThan } from '../util';
import type { Representation } from './negotiation';

export type JsonObject = { [key: string]: unknown };

export interface ProtobufObjectCodec {
  supports(apiVersion: string, kind: string): boolean;
  encode(object: JsonObject): Buffer;
  decode(body: Uint8Array): JsonObject;
}

export class BodyCodec {
  constructor(readonly protobuf?: ProtobufObjectCodec) {}

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
        throw errors.badRequest(`error converting YAML to JSON: ${(err as Error).message}`);
      }
    } else {
      try {
        value = JSON.parse(body.toString('utf8'));
      } catch (err) {
        throw errors.badRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
      }
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw errors.badRequest("couldn't get version/kind; json parse error: the request body is not a JSON object");
    }
    refuseTooDeep(value);
    return value as JsonObject;
  }

  encode(representation: Representation, object: JsonObject, pretty: boolean): Buffer {
    if (representation === 'protobuf') {
      if (this.protobuf === undefined) throw errors.internal(new Error('no Protobuf codec'));
      return this.protobuf.encode(object);
    }
    if (representation === 'yaml') return Buffer.from(toYaml(object), 'utf8');
    return Buffer.from(pretty ? JSON.stringify(object, null, 2) + '\n' : JSON.stringify(object) + '\n', 'utf8');
  }
}

/** A 400 for a document nested deeper than any object needs (and than recursive code can walk). */
export function refuseTooDeep(value: unknown): void {
  if (nestsDeeperThan(value, MAX_BODY_DEPTH)) throw errors.badRequest(`the request body nests more than ${MAX_BODY_DEPTH} levels deep`);
}
