/**
 * Conversion plans: for each Protobuf message of the v1.25 descriptor, how its fields map to the
 * JSON form of the same Go struct. A plan is built once per message, on first use, and then shared
 * by every encode and decode, so the per-request work is a walk over ready arrays.
 *
 * The descriptor is nearly a mirror of the JSON, with three kinds of exceptions, all kept here as
 * data rather than per-kind code (facts: src/codec/data/README.md, "Notes on the messages"):
 * - Go structs that JSON inlines are a nested message field in Protobuf (`inlinedFields`).
 * - A few field names differ (`renamedFields`, and the `xKubernetes*` rule of JSONSchemaProps).
 * - Some messages have a JSON form that is not an object (`specialMessages`): times, durations,
 *   quantities, int-or-string, raw JSON, and the `items` wrappers of named string slices.
 */
import * as protobuf from 'protobufjs';
import { assert } from '../../util';
import { alwaysPrintedFields } from './always-printed-fields';
import { goPointerScalarFields, pointerFieldKey } from './go-pointer-scalar-fields';

export type ScalarType = 'string' | 'int32' | 'int64' | 'bool' | 'bytes' | 'double';

/** Messages whose JSON form is not a JSON object with one key per field. */
export type SpecialKind =
  | 'time'
  | 'microTime'
  | 'duration'
  | 'quantity'
  | 'intOrString'
  | 'rawExtension'
  | 'fieldsV1'
  | 'json'
  | 'stringList'
  | 'schemaOrArray'
  | 'schemaOrBool'
  | 'schemaOrStringArray';

export type ValuePlan =
  | { readonly form: 'scalar'; readonly type: ScalarType; readonly wireType: 0 | 1 | 2 }
  | { readonly form: 'message'; readonly plan: MessagePlan }
  | { readonly form: 'special'; readonly kind: SpecialKind; readonly plan: MessagePlan };

export interface FieldPlan {
  readonly id: number;
  readonly protoName: string;
  /** The JSON key, or undefined for an inlined struct whose fields sit in the parent object. */
  readonly jsonName: string | undefined;
  readonly cardinality: 'single' | 'repeated' | 'map';
  /** Tag byte(s) of the field as written: (id << 3) | wire type. */
  readonly tag: number;
  readonly wireType: 0 | 1 | 2;
  /** Set after construction, because message plans may refer to each other in cycles. */
  value: ValuePlan;
  /**
   * A zero scalar read from the wire stays in the JSON: true for Go pointer fields
   * (`replicas *int32`, where zero is a set value) and for fields without `omitempty`, whose zero
   * kube-apiserver prints.
   */
  readonly keepsZero: boolean;
  /** Go's JSON prints this field even when unset, so decoding fills in its zero JSON. */
  readonly isAlwaysPrinted: boolean;
}

export interface MessagePlan {
  readonly fullName: string;
  /** Fields in ascending field number: the order Go's generated marshaller writes them in. */
  readonly fields: readonly FieldPlan[];
  readonly fieldsById: ReadonlyMap<number, FieldPlan>;
  /** A `...List` kind: decoding shows `items: []` when no item is on the wire. */
  readonly isList: boolean;
  /** Fields that decoding fills in when absent: always-printed ones and inlined structs. */
  readonly filledWhenAbsent: readonly FieldPlan[];
}

const meta = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const apiextensions = 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1';

const specialMessages: ReadonlyMap<string, SpecialKind> = new Map<string, SpecialKind>([
  [`${meta}.Time`, 'time'],
  [`${meta}.MicroTime`, 'microTime'],
  [`${meta}.Duration`, 'duration'],
  [`${meta}.FieldsV1`, 'fieldsV1'],
  ['k8s.io.apimachinery.pkg.api.resource.Quantity', 'quantity'],
  ['k8s.io.apimachinery.pkg.api.resource.QuantityValue', 'quantity'],
  ['k8s.io.apimachinery.pkg.util.intstr.IntOrString', 'intOrString'],
  ['k8s.io.apimachinery.pkg.runtime.RawExtension', 'rawExtension'],
  [`${apiextensions}.JSON`, 'json'],
  [`${apiextensions}.JSONSchemaPropsOrArray`, 'schemaOrArray'],
  [`${apiextensions}.JSONSchemaPropsOrBool`, 'schemaOrBool'],
  [`${apiextensions}.JSONSchemaPropsOrStringArray`, 'schemaOrStringArray'],
]);

/** `Message.field` pairs (package-qualified message) whose nested message JSON flattens. */
const inlinedFields: ReadonlySet<string> = new Set([
  'k8s.io.api.core.v1.Volume.volumeSource',
  'k8s.io.api.core.v1.PersistentVolumeSpec.persistentVolumeSource',
  'k8s.io.api.core.v1.Probe.handler',
  'k8s.io.api.core.v1.EphemeralContainer.ephemeralContainerCommon',
  ...['ConfigMapEnvSource', 'ConfigMapKeySelector', 'ConfigMapProjection', 'ConfigMapVolumeSource', 'SecretEnvSource', 'SecretKeySelector', 'SecretProjection'].map(
    (message) => `k8s.io.api.core.v1.${message}.localObjectReference`,
  ),
  'k8s.io.api.admissionregistration.v1.RuleWithOperations.rule',
  'k8s.io.api.admissionregistration.v1beta1.RuleWithOperations.rule',
  'k8s.io.api.networking.v1.IngressRule.ingressRuleValue',
  'k8s.io.api.networking.v1beta1.IngressRule.ingressRuleValue',
  'k8s.io.api.extensions.v1beta1.IngressRule.ingressRuleValue',
]);

/** Proto field names that differ from the JSON key, anywhere they occur. */
const renamedFields: ReadonlyMap<string, string> = new Map([
  ['Webhooks', 'webhooks'],
  ['uID', 'uid'],
  ['aPIGroup', 'apiGroup'],
]);

/** JSONSchemaProps keys that are not valid proto identifiers. */
const schemaPropsRenamed: ReadonlyMap<string, string> = new Map([
  ['ref', '$ref'],
  ['schema', '$schema'],
]);

const scalarWireTypes: Readonly<Record<ScalarType, 0 | 1 | 2>> = {
  string: 2,
  bytes: 2,
  int32: 0,
  int64: 0,
  bool: 0,
  double: 1,
};

/** Builds and caches the plans of one descriptor root. */
export class ConversionPlans {
  private readonly plans = new Map<string, MessagePlan>();

  constructor(private readonly root: protobuf.Root) {}

  /** The plan of a message by its package-qualified name (no leading dot). */
  planFor(fullName: string): MessagePlan {
    const cached = this.plans.get(fullName);
    if (cached !== undefined) return cached;
    const type = this.root.lookupType(fullName);
    return this.planOf(type);
  }

  /** The JSON form of a message used as a field value: a plain object or a special form. */
  valuePlanFor(fullName: string): ValuePlan {
    const plan = this.planFor(fullName);
    const special = specialMessages.get(fullName) ?? stringListKind(this.root.lookupType(fullName));
    return special === undefined ? { form: 'message', plan } : { form: 'special', kind: special, plan };
  }

  private planOf(type: protobuf.Type): MessagePlan {
    const fullName = type.fullName.replace(/^\./, '');
    const cached = this.plans.get(fullName);
    if (cached !== undefined) return cached;
    type.resolveAll();
    const fields: FieldPlan[] = [];
    const fieldsById = new Map<number, FieldPlan>();
    const filledWhenAbsent: FieldPlan[] = [];
    const isList = /List$/.test(type.name) && type.fields['items'] !== undefined;
    const plan: MessagePlan = { fullName, fields, fieldsById, isList, filledWhenAbsent };
    // Registered before the fields are filled in, so that recursive messages (JSONSchemaProps)
    // find their own plan instead of looping.
    this.plans.set(fullName, plan);
    const sorted = [...type.fieldsArray].sort((a, b) => a.id - b.id);
    for (const field of sorted) {
      const resolved = field.resolvedType;
      assert(!(resolved instanceof protobuf.Enum), `unexpected enum field ${fullName}.${field.name}`);
      const isMap = field instanceof protobuf.MapField;
      if (isMap) assert((field as protobuf.MapField).keyType === 'string', `map key of ${fullName}.${field.name} is not a string`);
      const cardinality = isMap ? 'map' : field.repeated ? 'repeated' : 'single';
      let wireType: 0 | 1 | 2;
      let value: ValuePlan;
      if (resolved instanceof protobuf.Type) {
        wireType = 2;
        // Filled below, after registration, through valuePlanFor (which may recurse into this plan).
        value = { form: 'message', plan };
      } else {
        const scalar = field.type as ScalarType;
        assert(scalar in scalarWireTypes, `unsupported scalar type ${field.type} of ${fullName}.${field.name}`);
        wireType = scalarWireTypes[scalar];
        value = { form: 'scalar', type: scalar, wireType };
      }
      const isPointer = goPointerScalarFields.has(pointerFieldKey(fullName, field.name));
      const isAlwaysPrinted = alwaysPrintedFields.has(`${fullName}.${field.name}`);
      // Map entries are always length-delimited on the wire.
      const tagWireType = cardinality === 'map' ? 2 : wireType;
      const fieldPlan: FieldPlan = {
        id: field.id,
        protoName: field.name,
        jsonName: inlinedFields.has(`${fullName}.${field.name}`) ? undefined : jsonNameOf(fullName, field.name),
        cardinality,
        tag: (field.id << 3) | tagWireType,
        wireType: tagWireType,
        value,
        keepsZero: isPointer || isAlwaysPrinted,
        // A Go pointer prints as null, not as its zero; the pointer's absence is left as is.
        isAlwaysPrinted: isAlwaysPrinted && !isPointer,
      };
      fields.push(fieldPlan);
      if (fieldPlan.isAlwaysPrinted || fieldPlan.jsonName === undefined) filledWhenAbsent.push(fieldPlan);
      fieldsById.set(field.id, fieldPlan);
    }
    for (const fieldPlan of fields) {
      const field = type.fields[fieldPlan.protoName];
      assert(field !== undefined, `field ${fieldPlan.protoName} vanished from ${fullName}`);
      if (field.resolvedType instanceof protobuf.Type) {
        fieldPlan.value = this.valuePlanFor(field.resolvedType.fullName.replace(/^\./, ''));
        assert(fieldPlan.jsonName !== undefined || fieldPlan.value.form === 'message', `inlined field ${fullName}.${field.name} is not a plain message`);
      }
    }
    return plan;
  }
}

function jsonNameOf(messageFullName: string, protoName: string): string {
  if (messageFullName === `${apiextensions}.JSONSchemaProps`) {
    const renamed = schemaPropsRenamed.get(protoName);
    if (renamed !== undefined) return renamed;
    if (protoName.startsWith('xKubernetes')) return protoName.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
  }
  return renamedFields.get(protoName) ?? protoName;
}

/**
 * Go named string slices (`type Verbs []string`, `type ExtraValue []string`) become a message
 * with one repeated `items` field; their JSON is the bare array.
 */
function stringListKind(type: protobuf.Type): SpecialKind | undefined {
  const fields = type.fieldsArray;
  const only = fields[0];
  if (fields.length === 1 && only !== undefined && only.name === 'items' && only.repeated && only.type === 'string') return 'stringList';
  return undefined;
}
