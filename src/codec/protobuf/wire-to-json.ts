/**
 * Reads the Protobuf bytes of a message into the JSON object kube-apiserver would print for the
 * same Go value.
 *
 * - Go writes its non-pointer scalars even when zero, and prints them in JSON only when not zero
 *   (`omitempty`), so a zero scalar is left out unless the field is a Go pointer or has no
 *   `omitempty` (`FieldPlan.keepsZero`).
 * - Nested messages are kept even when empty: a Go struct field prints as `{}`.
 * - An empty metav1.Time is Go's zero time, printed `null` (time_proto.go: Unmarshal of no bytes).
 * - Fields Go always prints but the bytes leave out are filled in with their zero JSON
 *   (`MessagePlan.filledWhenAbsent`), so the result does not depend on how complete the writer was.
 * - JSON keys come in field-number order, which is not always Go's struct order; only the order of
 *   keys differs from kube-apiserver's JSON.
 * - Unknown field numbers are skipped, as Go's generated Unmarshal does.
 */
import { Reader } from 'protobufjs';
import { ProtobufCodecError } from './protobuf-codec-error';
import type { ConversionPlans, FieldPlan, MessagePlan, ScalarType, SpecialKind, ValuePlan } from './conversion-plan';
import { formatGoDuration } from '../../util';
import { formatMicroTime, formatTime } from './rfc3339';
import type { JsonObject } from '../../apis/object';

/** Decodes the bytes of a RawExtension that start with the `k8s\0` envelope prefix. */
export type EmbeddedDecoder = (raw: Uint8Array) => JsonObject;

const schemaPropsName = 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps';
const envelopePrefix = [0x6b, 0x38, 0x73, 0x00];

/** protobufjs's int64: a Long when the `long` package is present, else a number. */
interface Int64Bits {
  low: number;
  high: number;
}

export class WireToJson {
  private schemaPropsPlan: MessagePlan | undefined;

  constructor(
    private readonly plans: ConversionPlans,
    private readonly decodeEmbedded: EmbeddedDecoder,
  ) {}

  /** Reads fields of message `plan` from `reader` up to byte `end` into `target`. */
  readMessage(reader: Reader, end: number, plan: MessagePlan, target: JsonObject): void {
    while (reader.pos < end) {
      const tag = reader.uint32();
      const id = tag >>> 3;
      const wireType = tag & 7;
      const field = plan.fieldsById.get(id);
      if (field === undefined) {
        reader.skipType(wireType);
        continue;
      }
      const key = field.jsonName;
      if (key === undefined) {
        expectWireType(plan, field, wireType, 2);
        const nestedEnd = lengthDelimitedEnd(reader, end, plan, field);
        this.readMessage(reader, nestedEnd, (field.value as { plan: MessagePlan }).plan, target);
        continue;
      }
      switch (field.cardinality) {
        case 'single': {
          expectWireType(plan, field, wireType, field.wireType);
          const value = this.readValue(reader, end, field.value, plan, field);
          if (field.keepsZero || field.value.form !== 'scalar' || !isZeroScalar(value)) target[key] = value;
          break;
        }
        case 'repeated': {
          const list = (target[key] ??= []) as unknown[];
          if (wireType === 2 && field.wireType !== 2) {
            // Packed repeated scalars: Go's decoders accept them, so do we.
            const packedEnd = lengthDelimitedEnd(reader, end, plan, field);
            while (reader.pos < packedEnd) list.push(this.readValue(reader, packedEnd, field.value, plan, field));
            checkEnd(reader, packedEnd, plan, field);
          } else {
            expectWireType(plan, field, wireType, field.wireType);
            list.push(this.readValue(reader, end, field.value, plan, field));
          }
          break;
        }
        case 'map': {
          expectWireType(plan, field, wireType, 2);
          const map = (target[key] ??= {}) as JsonObject;
          this.readMapEntry(reader, lengthDelimitedEnd(reader, end, plan, field), field, plan, map);
          break;
        }
      }
    }
    checkEnd(reader, end, plan, undefined);
    if (plan.isList && target['items'] === undefined) target['items'] = [];
    this.fillAbsent(plan, target);
  }

  /**
   * Adds the fields Go's JSON prints for a value the bytes left out: a zero scalar, null for a nil
   * slice or map or a zero time, `{}` (itself filled) for a struct. Go writers put these fields on
   * the wire anyway; other writers, Carina's encoder included, may not.
   */
  private fillAbsent(plan: MessagePlan, target: JsonObject): void {
    for (const field of plan.filledWhenAbsent) {
      if (field.jsonName === undefined) {
        this.fillAbsent((field.value as { plan: MessagePlan }).plan, target);
      } else if (target[field.jsonName] === undefined) {
        target[field.jsonName] = field.cardinality === 'single' ? this.absentValue(field.value, plan, field) : null;
      }
    }
  }

  private absentValue(valuePlan: ValuePlan, plan: MessagePlan, field: FieldPlan): unknown {
    if (valuePlan.form !== 'message') return this.zeroValue(valuePlan, plan, field);
    const object: JsonObject = {};
    if (valuePlan.plan.isList) object['items'] = [];
    this.fillAbsent(valuePlan.plan, object);
    return object;
  }

  private readMapEntry(reader: Reader, end: number, field: FieldPlan, plan: MessagePlan, map: JsonObject): void {
    let key = '';
    let value: unknown;
    let hasValue = false;
    while (reader.pos < end) {
      const tag = reader.uint32();
      if (tag === ((1 << 3) | 2)) {
        key = reader.string();
      } else if (tag >>> 3 === 2) {
        const expected = field.value.form === 'scalar' ? field.value.wireType : 2;
        expectWireType(plan, field, tag & 7, expected);
        value = this.readValue(reader, end, field.value, plan, field);
        hasValue = true;
      } else {
        reader.skipType(tag & 7);
      }
    }
    checkEnd(reader, end, plan, field);
    map[key] = hasValue ? value : this.zeroValue(field.value, plan, field);
  }

  private readValue(reader: Reader, end: number, valuePlan: ValuePlan, plan: MessagePlan, field: FieldPlan): unknown {
    switch (valuePlan.form) {
      case 'scalar':
        return readScalar(reader, valuePlan.type);
      case 'message': {
        const nestedEnd = lengthDelimitedEnd(reader, end, plan, field);
        const object: JsonObject = {};
        this.readMessage(reader, nestedEnd, valuePlan.plan, object);
        return object;
      }
      case 'special': {
        const nestedEnd = lengthDelimitedEnd(reader, end, plan, field);
        const value = this.readSpecial(reader, nestedEnd, valuePlan.kind, plan, field);
        checkEnd(reader, nestedEnd, plan, field);
        return value;
      }
    }
  }

  /** The JSON of a map value that is absent from its entry: Go's zero value. */
  private zeroValue(valuePlan: ValuePlan, plan: MessagePlan, field: FieldPlan): unknown {
    switch (valuePlan.form) {
      case 'scalar':
        return zeroScalar(valuePlan.type);
      case 'message':
        return {};
      case 'special': {
        const empty = Reader.create(new Uint8Array(0));
        return this.readSpecial(empty, 0, valuePlan.kind, plan, field);
      }
    }
  }

  private readSpecial(reader: Reader, end: number, kind: SpecialKind, plan: MessagePlan, field: FieldPlan): unknown {
    const start = reader.pos;
    switch (kind) {
      case 'time':
      case 'microTime': {
        let seconds = 0;
        let nanos = 0;
        while (reader.pos < end) {
          const tag = reader.uint32();
          if (tag === 8) seconds = toNumber(reader.int64());
          else if (tag === 16) nanos = reader.int32();
          else reader.skipType(tag & 7);
        }
        if (reader.pos === start) return null;
        // metav1.Time drops the nanoseconds on decode (time_proto.go); MicroTime keeps them.
        return kind === 'time' ? formatTime(seconds) : formatMicroTime(seconds, nanos);
      }
      case 'duration': {
        let nanos = 0n;
        while (reader.pos < end) {
          const tag = reader.uint32();
          if (tag === 8) nanos = toBigInt(reader.int64());
          else reader.skipType(tag & 7);
        }
        return formatGoDuration(nanos);
      }
      case 'quantity': {
        let text = '0';
        while (reader.pos < end) {
          const tag = reader.uint32();
          if (tag === 10) text = reader.string();
          else reader.skipType(tag & 7);
        }
        return text === '' ? '0' : text;
      }
      case 'intOrString': {
        let type = 0;
        let intVal = 0;
        let strVal = '';
        while (reader.pos < end) {
          const tag = reader.uint32();
          if (tag === 8) type = toNumber(reader.int64());
          else if (tag === 16) intVal = reader.int32();
          else if (tag === 26) strVal = reader.string();
          else reader.skipType(tag & 7);
        }
        return type === 1 ? strVal : intVal;
      }
      case 'rawExtension':
      case 'fieldsV1':
      case 'json': {
        let raw: Uint8Array | undefined;
        while (reader.pos < end) {
          const tag = reader.uint32();
          if (tag === 10) raw = reader.bytes();
          else reader.skipType(tag & 7);
        }
        if (raw === undefined || raw.length === 0) return null;
        if (kind === 'rawExtension' && hasEnvelopePrefix(raw)) return this.decodeEmbedded(raw);
        try {
          return JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8')) as unknown;
        } catch (error) {
          throw malformed(plan, field, 'embedded bytes are neither JSON nor a k8s Protobuf envelope', error);
        }
      }
      case 'stringList': {
        const items: string[] = [];
        while (reader.pos < end) {
          const tag = reader.uint32();
          if (tag === 10) items.push(reader.string());
          else reader.skipType(tag & 7);
        }
        return items;
      }
      case 'schemaOrArray':
      case 'schemaOrBool':
      case 'schemaOrStringArray':
        return this.readSchemaUnion(reader, end, kind, plan, field);
    }
  }

  /** The three JSONSchemaPropsOr* unions of apiextensions.k8s.io/v1 (types_jsonschema.go MarshalJSON). */
  private readSchemaUnion(reader: Reader, end: number, kind: SpecialKind, plan: MessagePlan, field: FieldPlan): unknown {
    this.schemaPropsPlan ??= this.plans.planFor(schemaPropsName);
    let schema: JsonObject | undefined;
    let allows = false;
    const schemas: JsonObject[] = [];
    const properties: string[] = [];
    while (reader.pos < end) {
      const tag = reader.uint32();
      const id = tag >>> 3;
      const wireType = tag & 7;
      const isSchemaField = (kind === 'schemaOrBool' ? id === 2 : id === 1) && wireType === 2;
      if (isSchemaField || (kind === 'schemaOrArray' && id === 2 && wireType === 2)) {
        const nestedEnd = lengthDelimitedEnd(reader, end, plan, field);
        const object: JsonObject = {};
        this.readMessage(reader, nestedEnd, this.schemaPropsPlan, object);
        if (isSchemaField) schema = object;
        else schemas.push(object);
      } else if (kind === 'schemaOrBool' && tag === 8) {
        allows = reader.bool();
      } else if (kind === 'schemaOrStringArray' && tag === 18) {
        properties.push(reader.string());
      } else {
        reader.skipType(wireType);
      }
    }
    switch (kind) {
      case 'schemaOrArray':
        return schemas.length > 0 ? schemas : (schema ?? null);
      case 'schemaOrBool':
        return schema ?? allows;
      default:
        return properties.length > 0 ? properties : (schema ?? null);
    }
  }
}

function readScalar(reader: Reader, type: ScalarType): unknown {
  switch (type) {
    case 'string':
      return reader.string();
    case 'int32':
      return reader.int32();
    case 'int64':
      return toNumber(reader.int64());
    case 'bool':
      return reader.bool();
    case 'double':
      return reader.double();
    case 'bytes': {
      const bytes = reader.bytes();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
    }
  }
}

function zeroScalar(type: ScalarType): unknown {
  switch (type) {
    case 'string':
    case 'bytes':
      return '';
    case 'bool':
      return false;
    default:
      return 0;
  }
}

function isZeroScalar(value: unknown): boolean {
  return value === '' || value === 0 || value === false;
}

function toNumber(value: Int64Bits | number): number {
  return typeof value === 'number' ? value : value.high * 4294967296 + (value.low >>> 0);
}

function toBigInt(value: Int64Bits | number): bigint {
  return typeof value === 'number' ? BigInt(value) : (BigInt(value.high) << 32n) + BigInt(value.low >>> 0);
}

function hasEnvelopePrefix(raw: Uint8Array): boolean {
  return raw.length >= 4 && envelopePrefix.every((byte, index) => raw[index] === byte);
}

function lengthDelimitedEnd(reader: Reader, end: number, plan: MessagePlan, field: FieldPlan): number {
  const length = reader.uint32();
  const nestedEnd = reader.pos + length;
  if (nestedEnd > end) throw malformed(plan, field, `length ${length} runs past the end of its message`);
  return nestedEnd;
}

function expectWireType(plan: MessagePlan, field: FieldPlan, actual: number, expected: number): void {
  if (actual !== expected) throw malformed(plan, field, `wire type ${actual}, expected ${expected}`);
}

function checkEnd(reader: Reader, end: number, plan: MessagePlan, field: FieldPlan | undefined): void {
  if (reader.pos !== end) throw malformed(plan, field, `read ${reader.pos - end} bytes past the end of the message`);
}

function malformed(plan: MessagePlan, field: FieldPlan | undefined, detail: string, cause?: unknown): ProtobufCodecError {
  const where = field === undefined ? plan.fullName : `${plan.fullName}.${field.protoName}`;
  return new ProtobufCodecError('Malformed', `decode ${where}: ${detail}`, { cause });
}
