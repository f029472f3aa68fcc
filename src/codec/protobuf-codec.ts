/**
 * The Kubernetes Protobuf encoding (`application/vnd.kubernetes.protobuf`) of the JSON objects
 * Carina stores and serves.
 *
 * A body is the four bytes `k8s\0` and then a runtime.Unknown message: typeMeta{apiVersion, kind}
 * (1), raw (2) holding the object's own message, contentEncoding (3) and contentType (4), the last
 * two written empty (k8s.io/apimachinery pkg/runtime/serializer/protobuf/protobuf.go).
 *
 * A watch stream is different (k8s.io/apimachinery pkg/runtime/serializer/protobuf_extension.go:
 * the stream serializer is the *raw* serializer and the framer is LengthDelimitedFramer): each
 * frame is a 4-byte big-endian length and then a bare meta.v1.WatchEvent message, without prefix
 * or envelope, whose object.raw holds the object in the full `k8s\0` envelope (the watch handler's
 * embedded encoder, k8s.io/apiserver pkg/endpoints/handlers/watch.go).
 *
 * Conversion plans are built once per message type and cached; see protobuf/conversion-plan.ts
 * for how JSON keys map to proto fields and protobuf/wire-to-json.ts for what decoding leaves out.
 */
import { readFileSync } from 'node:fs';
import * as protobuf from 'protobufjs';
import { packagePath } from '../util';
import { ConversionPlans, type MessagePlan } from './protobuf/conversion-plan';
import { JsonToWire } from './protobuf/json-to-wire';
import { WireWriter } from './protobuf/wire-writer';
import { KindIndex } from './protobuf/kind-index';
import { ProtobufCodecError } from './protobuf/protobuf-codec-error';
import { WireToJson } from './protobuf/wire-to-json';
import type { JsonObject } from '../apis/object';

/** The apiVersion and kind that name an object's type. */
export interface TypeName {
  apiVersion: string;
  kind: string;
}

/** One event of a watch stream. */
export interface WatchEventJson {
  /** ADDED, MODIFIED, DELETED, BOOKMARK or ERROR. */
  type: string;
  object: JsonObject;
}

const envelopePrefix = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
const frameHeaderBytes = 4;
const watchEventMessage = 'k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent';

/**
 * Converts Carina's JSON objects to and from `application/vnd.kubernetes.protobuf` bodies and
 * watch frames. One instance serves every request; it holds no per-request state.
 *
 * @example
 * const codec = ProtobufCodec.load();
 * const body = codec.encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } });
 * codec.decode(body); // { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', creationTimestamp: null } }
 */
export class ProtobufCodec {
  private static loaded: ProtobufCodec | undefined;

  /** The descriptor's JSON, read at the first question about a kind. */
  private descriptor: protobuf.INamespace | undefined;
  private kindIndex: KindIndex | undefined;
  /** protobufjs's Root and what is built on it, made at the first encode or decode. */
  private messages: { plans: ConversionPlans; toWire: JsonToWire; toJson: WireToJson } | undefined;

  private constructor(private readonly descriptorPath: string) {}

  /**
   * The codec over the shipped v1.25 descriptor, shared by every caller. Nothing is read here:
   * the descriptor at the first call that needs it, protobufjs's Root (0.12 s of CPU) at the
   * first encode or decode, so a replica that serves only JSON starts without them (issue 32).
   */
  static load(): ProtobufCodec {
    ProtobufCodec.loaded ??= new ProtobufCodec(packagePath('src', 'codec', 'data', 'k8s-protobuf-v1.25.json'));
    return ProtobufCodec.loaded;
  }

  private get kinds(): KindIndex {
    this.kindIndex ??= new KindIndex(this.descriptorJson());
    return this.kindIndex;
  }

  private get plans(): ConversionPlans {
    return this.messageCodecs().plans;
  }

  private get toWire(): JsonToWire {
    return this.messageCodecs().toWire;
  }

  private get toJson(): WireToJson {
    return this.messageCodecs().toJson;
  }

  private descriptorJson(): protobuf.INamespace {
    this.descriptor ??= JSON.parse(readFileSync(this.descriptorPath, 'utf8')) as protobuf.INamespace;
    return this.descriptor;
  }

  private messageCodecs(): { plans: ConversionPlans; toWire: JsonToWire; toJson: WireToJson } {
    if (this.messages === undefined) {
      const plans = new ConversionPlans(protobuf.Root.fromJSON(this.descriptorJson()));
      this.messages = { plans, toWire: new JsonToWire(plans), toJson: new WireToJson(plans, (raw) => this.decode(raw)) };
    }
    return this.messages;
  }

  /** Whether apiVersion/kind has a Protobuf message, e.g. ('apps/v1', 'Deployment'). */
  supports(apiVersion: string, kind: string): boolean {
    return this.kinds.messageFor(apiVersion, kind) !== undefined;
  }

  /**
   * The package-qualified Protobuf message of a kind, e.g. ('v1', 'Status') ->
   * 'k8s.io.apimachinery.pkg.apis.meta.v1.Status', or undefined when it has none.
   */
  messageName(apiVersion: string, kind: string): string | undefined {
    return this.kinds.messageFor(apiVersion, kind);
  }

  /**
   * The full Protobuf body of `object`: `k8s\0` and the runtime.Unknown envelope.
   *
   * @param object a JSON object; its `apiVersion` and `kind` become the envelope's typeMeta.
   * @param as the type to encode as when the object names none (WatchEvent has no TypeMeta).
   * @throws ProtobufCodecError UnknownKind, NotRepresentable.
   */
  encode(object: JsonObject, as?: TypeName): Buffer {
    const typeMeta = typeMetaOf(object);
    const plan = this.planOf(typeMeta.apiVersion !== '' || typeMeta.kind !== '' ? typeMeta : (as ?? typeMeta));
    const writer = new WireWriter();
    writer.uint32(0x0a).fork().uint32(0x0a).string(typeMeta.apiVersion).uint32(0x12).string(typeMeta.kind).ldelim();
    writer.uint32(0x12).fork();
    this.toWire.writeMessage(writer, plan, object);
    writer.ldelim();
    writer.uint32(0x1a).string('').uint32(0x22).string('');
    return Buffer.concat([envelopePrefix, writer.finish()]);
  }

  /**
   * The JSON object of a full Protobuf body; `apiVersion` and `kind` come from the envelope.
   *
   * @param as the type to decode as when the envelope's typeMeta is empty.
   * @throws ProtobufCodecError BadPrefix, UnknownKind, Malformed.
   */
  decode(body: Uint8Array, as?: TypeName): JsonObject {
    if (body.length < envelopePrefix.length || !envelopePrefix.every((byte, index) => body[index] === byte)) {
      throw new ProtobufCodecError('BadPrefix', 'decode Protobuf body: it does not start with the 4 bytes "k8s\\0"');
    }
    return guardMalformed('runtime.Unknown envelope', () => {
      const reader = protobuf.Reader.create(body.subarray(envelopePrefix.length));
      const typeMeta: TypeName = { apiVersion: '', kind: '' };
      let rawStart = -1;
      let rawEnd = -1;
      let contentEncoding = '';
      while (reader.pos < reader.len) {
        const tag = reader.uint32();
        if (tag === 0x0a) {
          const end = reader.uint32() + reader.pos;
          while (reader.pos < end) {
            const inner = reader.uint32();
            if (inner === 0x0a) typeMeta.apiVersion = reader.string();
            else if (inner === 0x12) typeMeta.kind = reader.string();
            else reader.skipType(inner & 7);
          }
          if (reader.pos !== end) throw new ProtobufCodecError('Malformed', 'decode runtime.Unknown: typeMeta overruns its length');
        } else if (tag === 0x12) {
          const length = reader.uint32();
          rawStart = reader.pos;
          rawEnd = rawStart + length;
          reader.skip(length);
        } else if (tag === 0x1a) {
          contentEncoding = reader.string();
        } else {
          reader.skipType(tag & 7);
        }
      }
      if (contentEncoding !== '') {
        throw new ProtobufCodecError('Malformed', `decode runtime.Unknown: content encoding "${contentEncoding}" is not supported`);
      }
      const named = typeMeta.apiVersion !== '' || typeMeta.kind !== '';
      const plan = this.planOf(named ? typeMeta : (as ?? typeMeta));
      // Go's JSON puts TypeMeta first, kind before apiVersion.
      const object: JsonObject = named ? { kind: typeMeta.kind, apiVersion: typeMeta.apiVersion } : {};
      if (rawStart >= 0) {
        reader.pos = rawStart;
        this.toJson.readMessage(reader, rawEnd, plan, object);
      } else {
        // No raw bytes: the zero object, which still shows its always-printed fields.
        this.toJson.readMessage(reader, reader.pos, plan, object);
      }
      return object;
    });
  }

  /**
   * One frame of a Protobuf watch stream: 4-byte big-endian length, then meta.v1.WatchEvent
   * {type, object: RawExtension{raw: encode(object)}}.
   */
  encodeWatchEventFrame(type: string, object: JsonObject): Buffer {
    const envelope = this.encode(object);
    const writer = new WireWriter();
    writer.uint32(0x0a).string(type);
    writer.uint32(0x12).fork().uint32(0x0a).bytes(envelope).ldelim();
    const event = writer.finish();
    const header = Buffer.alloc(frameHeaderBytes);
    header.writeUInt32BE(event.length, 0);
    return Buffer.concat([header, event]);
  }

  /**
   * The event of one complete watch frame, as written by encodeWatchEventFrame or kube-apiserver.
   *
   * @throws ProtobufCodecError Malformed when the length does not match, and as decode.
   */
  decodeWatchEventFrame(frame: Uint8Array): WatchEventJson {
    const length = ProtobufCodec.frameLength(frame);
    if (length === undefined || frame.length !== frameHeaderBytes + length) {
      throw new ProtobufCodecError('Malformed', `decode watch frame: header says ${length ?? '?'} bytes, frame holds ${frame.length - frameHeaderBytes}`);
    }
    return this.decodeWatchEvent(frame.subarray(frameHeaderBytes));
  }

  /** The length a frame's 4-byte header announces, or undefined if fewer than 4 bytes are given. */
  static frameLength(bytes: Uint8Array): number | undefined {
    if (bytes.length < frameHeaderBytes) return undefined;
    return Buffer.from(bytes.buffer, bytes.byteOffset, frameHeaderBytes).readUInt32BE(0);
  }

  private decodeWatchEvent(event: Uint8Array): WatchEventJson {
    const raw = guardMalformed(watchEventMessage, () => {
      const reader = protobuf.Reader.create(event);
      let type = '';
      let objectRaw: Uint8Array | undefined;
      while (reader.pos < reader.len) {
        const tag = reader.uint32();
        if (tag === 0x0a) {
          type = reader.string();
        } else if (tag === 0x12) {
          const end = reader.uint32() + reader.pos;
          while (reader.pos < end) {
            const inner = reader.uint32();
            if (inner === 0x0a) objectRaw = reader.bytes();
            else reader.skipType(inner & 7);
          }
        } else {
          reader.skipType(tag & 7);
        }
      }
      return { type, objectRaw };
    });
    if (raw.objectRaw === undefined) throw new ProtobufCodecError('Malformed', 'decode watch event: it carries no object');
    return { type: raw.type, object: this.decode(raw.objectRaw) };
  }

  private planOf(type: TypeName): MessagePlan {
    const message = this.kinds.messageFor(type.apiVersion, type.kind);
    if (message === undefined) {
      throw new ProtobufCodecError('UnknownKind', `no Protobuf message for apiVersion "${type.apiVersion}", kind "${type.kind}"`);
    }
    return this.plans.planFor(message);
  }
}

function typeMetaOf(object: JsonObject): TypeName {
  const { apiVersion = '', kind = '' } = object;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') {
    throw new ProtobufCodecError('NotRepresentable', 'encode: apiVersion and kind must be strings');
  }
  return { apiVersion, kind };
}

/** Runs a decode step, turning protobufjs's out-of-range reads into a Malformed error. */
function guardMalformed<T>(what: string, step: () => T): T {
  try {
    return step();
  } catch (error) {
    if (error instanceof ProtobufCodecError) throw error;
    throw new ProtobufCodecError('Malformed', `decode ${what}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
