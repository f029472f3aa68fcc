/**
 * The Go field order of the v1.25 types the serialization fixtures do not show, for the
 * generator (generate-field-order.ts): the fixtures (kubernetes/api testdata) hold no object of
 * apiextensions.k8s.io, apiregistration.k8s.io, of the discovery documents or of the
 * meta.k8s.io kinds the server makes itself (Table, PartialObjectMetadata). Each entry was read
 * from the Go type in the named file of Kubernetes v1.25.16; fields are named as JSON names
 * them, with their types written as in the generated data (field-order.ts, `FieldType`).
 *
 * A field the v1.25 OpenAPI document does not list (a later version's addition) has no place
 * here; the generator checks that every listed property of a definition has one.
 */

/** Definition name (OpenAPI, less `io.k8s.`) → its fields in Go order → field type. */
export type StructFacts = Readonly<Record<string, Readonly<Record<string, string>>>>;

const APIEXTENSIONS = 'apiextensions-apiserver.pkg.apis.apiextensions.v1';
const APIREGISTRATION = 'kube-aggregator.pkg.apis.apiregistration.v1';
const META = 'apimachinery.pkg.apis.meta.v1';

/** k8s.io/apiextensions-apiserver pkg/apis/apiextensions/v1 types.go and types_jsonschema.go. */
const apiextensions: StructFacts = {
  [`${APIEXTENSIONS}.CustomResourceDefinition`]: { kind: '', apiVersion: '', metadata: `${META}.ObjectMeta`, spec: `${APIEXTENSIONS}.CustomResourceDefinitionSpec`, status: `${APIEXTENSIONS}.CustomResourceDefinitionStatus` },
  [`${APIEXTENSIONS}.CustomResourceDefinitionList`]: { kind: '', apiVersion: '', metadata: `${META}.ListMeta`, items: `[]${APIEXTENSIONS}.CustomResourceDefinition` },
  [`${APIEXTENSIONS}.CustomResourceDefinitionSpec`]: { group: '', names: `${APIEXTENSIONS}.CustomResourceDefinitionNames`, scope: '', versions: `[]${APIEXTENSIONS}.CustomResourceDefinitionVersion`, conversion: `${APIEXTENSIONS}.CustomResourceConversion`, preserveUnknownFields: '' },
  [`${APIEXTENSIONS}.CustomResourceConversion`]: { strategy: '', webhook: `${APIEXTENSIONS}.WebhookConversion` },
  [`${APIEXTENSIONS}.WebhookConversion`]: { clientConfig: `${APIEXTENSIONS}.WebhookClientConfig`, conversionReviewVersions: '' },
  [`${APIEXTENSIONS}.WebhookClientConfig`]: { url: '', service: `${APIEXTENSIONS}.ServiceReference`, caBundle: '' },
  [`${APIEXTENSIONS}.ServiceReference`]: { namespace: '', name: '', path: '', port: '' },
  [`${APIEXTENSIONS}.CustomResourceDefinitionVersion`]: { name: '', served: '', storage: '', deprecated: '', deprecationWarning: '', schema: `${APIEXTENSIONS}.CustomResourceValidation`, subresources: `${APIEXTENSIONS}.CustomResourceSubresources`, additionalPrinterColumns: `[]${APIEXTENSIONS}.CustomResourceColumnDefinition` },
  [`${APIEXTENSIONS}.CustomResourceColumnDefinition`]: { name: '', type: '', format: '', description: '', priority: '', jsonPath: '' },
  [`${APIEXTENSIONS}.CustomResourceDefinitionNames`]: { plural: '', singular: '', shortNames: '', kind: '', listKind: '', categories: '' },
  [`${APIEXTENSIONS}.CustomResourceDefinitionCondition`]: { type: '', status: '', lastTransitionTime: '', reason: '', message: '' },
  [`${APIEXTENSIONS}.CustomResourceDefinitionStatus`]: { conditions: `[]${APIEXTENSIONS}.CustomResourceDefinitionCondition`, acceptedNames: `${APIEXTENSIONS}.CustomResourceDefinitionNames`, storedVersions: '' },
  [`${APIEXTENSIONS}.CustomResourceValidation`]: { openAPIV3Schema: `${APIEXTENSIONS}.JSONSchemaProps` },
  // status is an empty struct (CustomResourceSubresourceStatus): `{}` whatever it is given.
  [`${APIEXTENSIONS}.CustomResourceSubresources`]: { status: '', scale: `${APIEXTENSIONS}.CustomResourceSubresourceScale` },
  [`${APIEXTENSIONS}.CustomResourceSubresourceScale`]: { specReplicasPath: '', statusReplicasPath: '', labelSelectorPath: '' },
  // default, enum and example are JSON{Raw}: Go writes the bytes it was given, in their order.
  // items, additionalProperties, additionalItems and dependencies' values are a schema or
  // something else (JSONSchemaPropsOrArray, ...OrBool, ...OrStringArray): `?`.
  [`${APIEXTENSIONS}.JSONSchemaProps`]: {
    id: '', $schema: '', $ref: '', description: '', type: '', format: '', title: '', default: '', maximum: '', exclusiveMaximum: '',
    minimum: '', exclusiveMinimum: '', maxLength: '', minLength: '', pattern: '', maxItems: '', minItems: '', uniqueItems: '',
    multipleOf: '', enum: '', maxProperties: '', minProperties: '', required: '',
    items: `?${APIEXTENSIONS}.JSONSchemaProps`, allOf: `[]${APIEXTENSIONS}.JSONSchemaProps`, oneOf: `[]${APIEXTENSIONS}.JSONSchemaProps`,
    anyOf: `[]${APIEXTENSIONS}.JSONSchemaProps`, not: `${APIEXTENSIONS}.JSONSchemaProps`, properties: `{}${APIEXTENSIONS}.JSONSchemaProps`,
    additionalProperties: `?${APIEXTENSIONS}.JSONSchemaProps`, patternProperties: `{}${APIEXTENSIONS}.JSONSchemaProps`,
    dependencies: `{}?${APIEXTENSIONS}.JSONSchemaProps`, additionalItems: `?${APIEXTENSIONS}.JSONSchemaProps`,
    definitions: `{}${APIEXTENSIONS}.JSONSchemaProps`, externalDocs: `${APIEXTENSIONS}.ExternalDocumentation`, example: '', nullable: '',
    'x-kubernetes-preserve-unknown-fields': '', 'x-kubernetes-embedded-resource': '', 'x-kubernetes-int-or-string': '',
    'x-kubernetes-list-map-keys': '', 'x-kubernetes-list-type': '', 'x-kubernetes-map-type': '',
    'x-kubernetes-validations': `[]${APIEXTENSIONS}.ValidationRule`,
  },
  [`${APIEXTENSIONS}.ValidationRule`]: { rule: '', message: '' },
  [`${APIEXTENSIONS}.ExternalDocumentation`]: { description: '', url: '' },
};

/** k8s.io/kube-aggregator pkg/apis/apiregistration/v1 types.go. */
const apiregistration: StructFacts = {
  [`${APIREGISTRATION}.APIService`]: { kind: '', apiVersion: '', metadata: `${META}.ObjectMeta`, spec: `${APIREGISTRATION}.APIServiceSpec`, status: `${APIREGISTRATION}.APIServiceStatus` },
  [`${APIREGISTRATION}.APIServiceList`]: { kind: '', apiVersion: '', metadata: `${META}.ListMeta`, items: `[]${APIREGISTRATION}.APIService` },
  [`${APIREGISTRATION}.APIServiceSpec`]: { service: `${APIREGISTRATION}.ServiceReference`, group: '', version: '', insecureSkipTLSVerify: '', caBundle: '', groupPriorityMinimum: '', versionPriority: '' },
  [`${APIREGISTRATION}.ServiceReference`]: { namespace: '', name: '', port: '' },
  [`${APIREGISTRATION}.APIServiceStatus`]: { conditions: `[]${APIREGISTRATION}.APIServiceCondition` },
  [`${APIREGISTRATION}.APIServiceCondition`]: { type: '', status: '', lastTransitionTime: '', reason: '', message: '' },
};

/**
 * k8s.io/apimachinery pkg/apis/meta/v1 types.go (discovery documents, APIResource) and
 * pkg/apis/meta/v1 types.go / meta/v1beta1 (Table, PartialObjectMetadata), which the server
 * writes itself: none is in an OpenAPI document but APIResource(List).
 */
const meta: StructFacts = {
  [`${META}.APIResourceList`]: { kind: '', apiVersion: '', groupVersion: '', resources: `[]${META}.APIResource` },
  [`${META}.APIResource`]: { name: '', singularName: '', namespaced: '', group: '', version: '', kind: '', verbs: '', shortNames: '', categories: '', storageVersionHash: '' },
  [`${META}.APIGroupList`]: { kind: '', apiVersion: '', groups: `[]${META}.APIGroup` },
  [`${META}.APIGroup`]: { kind: '', apiVersion: '', name: '', versions: `[]${META}.GroupVersionForDiscovery`, preferredVersion: `${META}.GroupVersionForDiscovery`, serverAddressByClientCIDRs: `[]${META}.ServerAddressByClientCIDR` },
  [`${META}.GroupVersionForDiscovery`]: { groupVersion: '', version: '' },
  [`${META}.ServerAddressByClientCIDR`]: { clientCIDR: '', serverAddress: '' },
  [`${META}.APIVersions`]: { kind: '', apiVersion: '', versions: '', serverAddressByClientCIDRs: `[]${META}.ServerAddressByClientCIDR` },
  // rows[].cells are []interface{} and rows[].object a RawExtension: written as they are.
  [`${META}.Table`]: { kind: '', apiVersion: '', metadata: `${META}.ListMeta`, columnDefinitions: `[]${META}.TableColumnDefinition`, rows: `[]${META}.TableRow` },
  [`${META}.TableColumnDefinition`]: { name: '', type: '', format: '', description: '', priority: '' },
  [`${META}.TableRow`]: { cells: '', conditions: `[]${META}.TableRowCondition`, object: '' },
  [`${META}.TableRowCondition`]: { type: '', status: '', reason: '', message: '' },
  [`${META}.PartialObjectMetadata`]: { kind: '', apiVersion: '', metadata: `${META}.ObjectMeta` },
  [`${META}.PartialObjectMetadataList`]: { kind: '', apiVersion: '', metadata: `${META}.ListMeta`, items: `[]${META}.PartialObjectMetadata` },
};

export const goStructFacts: StructFacts = { ...apiextensions, ...apiregistration, ...meta };

/** Kinds the server writes whose type is in no OpenAPI document (apiVersion and kind → definition). */
export const factKinds: Readonly<Record<string, string>> = {
  'v1 APIGroupList': `${META}.APIGroupList`,
  'v1 APIGroup': `${META}.APIGroup`,
  'v1 APIVersions': `${META}.APIVersions`,
  'meta.k8s.io/v1 Table': `${META}.Table`,
  'meta.k8s.io/v1beta1 Table': `${META}.Table`,
  'meta.k8s.io/v1 PartialObjectMetadata': `${META}.PartialObjectMetadata`,
  'meta.k8s.io/v1beta1 PartialObjectMetadata': `${META}.PartialObjectMetadata`,
  'meta.k8s.io/v1 PartialObjectMetadataList': `${META}.PartialObjectMetadataList`,
  'meta.k8s.io/v1beta1 PartialObjectMetadataList': `${META}.PartialObjectMetadataList`,
};
