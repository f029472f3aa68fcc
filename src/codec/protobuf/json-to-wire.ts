/**
 * Writes a JSON object as the Protobuf bytes of its message, the way Go's generated marshaller
 * (gogo-protobuf, as used by k8s.io/api v0.25) lays them out: fields in ascending number, map
 * entries in ascending key order (Go sorts the keys), repeated scalars unpacked (proto2), every
 * map entry with its key and value.
 *
 * A JSON `null` or missing key writes nothing. Go would also write the zero value of its
 * non-pointer fields, which the descriptor cannot tell apart from pointer ones; Go's decoders read
 * both forms as the same object.
 */
import { ProtobufCodecError } from './protobuf-codec-error';
import type { ConversionPlans, FieldPlan, MessagePlan, ScalarType, SpecialKind, ValuePlan } from './conversion-plan';
import { parseGoDuration } from '../../util';
import { parseRfc3339 } from './rfc3339';
import type { WireWriter as Writer } from './wire-writer';
import { isJsonObject, type JsonObject } from '../../apis/object';

const schemaPropsName = 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps';

export class JsonToWire {
  private schemaPropsPlan: MessagePlan | undefined;

  constructor(private readonly plans: ConversionPlans) {}

  /** Appends the fields of `object`, as message `plan`, to `writer` (no tag, no length). */
  writeMessage(writer: Writer, plan: MessagePlan, object: JsonObject): void {
    for (const field of plan.fields) {
      if (field.jsonName === undefined) {
        // An inlined Go struct: its fields sit in this same JSON object. Go always writes it.
        writer.uint32(field.tag).fork();
        this.writeMessage(writer, (field.value as { plan: MessagePlan }).plan, object);
        writer.ldelim();
        continue;
      }
      const value = object[field.jsonName];
      if (value === undefined || value === null) continue;
      switch (field.cardinality) {
        case 'single':
          this.writeValue(writer, field.tag, field.value, value, plan, field);
          break;
        case 'repeated':
          if (!Array.isArray(value)) throw notRepresentable(plan, field, 'an array', value);
          for (const element of value) {
            if (element === null) throw notRepresentable(plan, field, 'no null elements', element);
            this.writeValue(writer, field.tag, field.value, element, plan, field);
          }
          break;
        case 'map':
          this.writeMap(writer, field, value, plan);
          break;
      }
    }
  }

  private writeMap(writer: Writer, field: FieldPlan, value: unknown, plan: MessagePlan): void {
    if (!isJsonObject(value)) throw notRepresentable(plan, field, 'an object', value);
    const valueTag = field.value.form === 'scalar' ? (2 << 3) | field.value.wireType : (2 << 3) | 2;
    for (const key of sortedKeys(value)) {
      const entryValue = value[key];
      writer.uint32(field.tag).fork();
      writer.uint32((1 << 3) | 2).string(key);
      if (entryValue !== null && entryValue !== undefined) {
        this.writeValue(writer, valueTag, field.value, entryValue, plan, field);
      } else {
        writeNullMapValue(writer, valueTag, field.value);
      }
      writer.ldelim();
    }
  }

  private writeValue(writer: Writer, tag: number, valuePlan: ValuePlan, value: unknown, plan: MessagePlan, field: FieldPlan): void {
    switch (valuePlan.form) {
      case 'scalar':
        writer.uint32(tag);
        writeScalar(writer, valuePlan.type, value, plan, field);
        return;
      case 'message':
        if (!isJsonObject(value)) throw notRepresentable(plan, field, 'an object', value);
        writer.uint32(tag).fork();
        this.writeMessage(writer, valuePlan.plan, value);
        writer.ldelim();
        return;
      case 'special':
        writer.uint32(tag).fork();
        this.writeSpecial(writer, valuePlan.kind, value, plan, field);
        writer.ldelim();
        return;
    }
  }

  private writeSpecial(writer: Writer, kind: SpecialKind, value: unknown, plan: MessagePlan, field: FieldPlan): void {
    switch (kind) {
      case 'time':
      case 'microTime': {
        const instant = typeof value === 'string' ? parseRfc3339(value) : undefined;
        if (instant === undefined) throw notRepresentable(plan, field, 'an RFC 3339 time', value);
        // metav1.Time keeps whole seconds only (time_proto.go: ProtoTime leaves Nanos zero).
        writer.uint32(8).int64(instant.seconds).uint32(16).int32(kind === 'time' ? 0 : instant.nanos);
        return;
      }
      case 'duration': {
        const nanos = typeof value === 'string' ? parseGoDuration(value) : undefined;
        if (nanos === undefined) throw notRepresentable(plan, field, 'a Go duration such as "1h2m3s"', value);
        writer.uint32(8).int64(nanos.toString());
        return;
      }
      case 'quantity':
        if (typeof value !== 'string' && typeof value !== 'number') throw notRepresentable(plan, field, 'a quantity string', value);
        writer.uint32(10).string(String(value));
        return;
      case 'intOrString':
        // IntOrString has three non-pointer fields, so Go writes all three.
        if (typeof value === 'number' && Number.isInteger(value)) {
          writer.uint32(8).int64(0).uint32(16).int32(value).uint32(26).string('');
        } else if (typeof value === 'string') {
          writer.uint32(8).int64(1).uint32(16).int32(0).uint32(26).string(value);
        } else {
          throw notRepresentable(plan, field, 'an integer or a string', value);
        }
        return;
      case 'rawExtension':
      case 'fieldsV1':
      case 'json':
        writer.uint32(10).bytes(Buffer.from(JSON.stringify(value), 'utf8'));
        return;
      case 'stringList':
        if (!Array.isArray(value)) throw notRepresentable(plan, field, 'an array of strings', value);
        for (const item of value) {
          if (typeof item !== 'string') throw notRepresentable(plan, field, 'an array of strings', value);
          writer.uint32(10).string(item);
        }
        return;
      case 'schemaOrArray':
        if (Array.isArray(value)) {
          for (const schema of value) this.writeSchema(writer, 18, schema, plan, field);
        } else {
          this.writeSchema(writer, 10, value, plan, field);
        }
        return;
      case 'schemaOrBool':
        if (typeof value === 'boolean') {
          writer.uint32(8).bool(value);
        } else {
          writer.uint32(8).bool(true);
          this.writeSchema(writer, 18, value, plan, field);
        }
        return;
      case 'schemaOrStringArray':
        if (Array.isArray(value)) {
          for (const property of value) {
            if (typeof property !== 'string') throw notRepresentable(plan, field, 'a schema or an array of strings', value);
            writer.uint32(18).string(property);
          }
        } else {
          this.writeSchema(writer, 10, value, plan, field);
        }
        return;
    }
  }

  private writeSchema(writer: Writer, tag: number, value: unknown, plan: MessagePlan, field: FieldPlan): void {
    if (!isJsonObject(value)) throw notRepresentable(plan, field, 'a JSON schema object', value);
    this.schemaPropsPlan ??= this.plans.planFor(schemaPropsName);
    writer.uint32(tag).fork();
    this.writeMessage(writer, this.schemaPropsPlan, value);
    writer.ldelim();
  }
}

/**
 * A JSON null map value is Go's zero value, which Go's marshaller still writes: an empty message
 * (a zero metav1.Time in PodDisruptionBudgetStatus.disruptedPods), an empty string or zero; only a
 * nil []byte is left out.
 */
function writeNullMapValue(writer: Writer, tag: number, valuePlan: ValuePlan): void {
  if (valuePlan.form !== 'scalar') {
    writer.uint32(tag).uint32(0);
    return;
  }
  switch (valuePlan.type) {
    case 'bytes':
      return;
    case 'string':
      writer.uint32(tag).string('');
      return;
    case 'bool':
      writer.uint32(tag).bool(false);
      return;
    case 'double':
      writer.uint32(tag).double(0);
      return;
    default:
      writer.uint32(tag).int32(0);
  }
}

function writeScalar(writer: Writer, type: ScalarType, value: unknown, plan: MessagePlan, field: FieldPlan): void {
  switch (type) {
    case 'string':
      if (typeof value !== 'string') throw notRepresentable(plan, field, 'a string', value);
      writer.string(value);
      return;
    case 'bool':
      if (typeof value !== 'boolean') throw notRepresentable(plan, field, 'a boolean', value);
      writer.bool(value);
      return;
    case 'int32':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < -2147483648 || value > 2147483647) {
        throw notRepresentable(plan, field, 'a 32-bit integer', value);
      }
      writer.int32(value);
      return;
    case 'int64':
      if (typeof value !== 'number' || !Number.isInteger(value)) throw notRepresentable(plan, field, 'an integer', value);
      writer.int64(value);
      return;
    case 'double':
      if (typeof value !== 'number') throw notRepresentable(plan, field, 'a number', value);
      writer.double(value);
      return;
    case 'bytes':
      if (typeof value !== 'string' || !isBase64(value)) throw notRepresentable(plan, field, 'a base64 string', value);
      writer.bytes(Buffer.from(value, 'base64'));
      return;
  }
}

const base64Text = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function isBase64(text: string): boolean {
  return base64Text.test(text);
}

/** Keys in Go's sort.Strings order, which compares UTF-8 bytes. */
function sortedKeys(object: JsonObject): string[] {
  const keys = Object.keys(object);
  // UTF-16 order equals UTF-8 byte order unless a key holds characters outside the BMP.
  if (keys.every((key) => !/[\ud800-\udfff]/.test(key))) return keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return keys.sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
}

function notRepresentable(plan: MessagePlan, field: FieldPlan, expected: string, value: unknown): ProtobufCodecError {
  const shown = JSON.stringify(value);
  const excerpt = shown === undefined ? String(value) : shown.length > 60 ? `${shown.slice(0, 60)}...` : shown;
  return new ProtobufCodecError('NotRepresentable', `encode ${plan.fullName}.${field.jsonName ?? field.protoName}: expected ${expected}, got ${excerpt}`);
}
