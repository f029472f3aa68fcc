/**
 * Validation of apiextensions.k8s.io/v1 CustomResourceDefinitions on create and update, with
 * kube-apiserver v1.25's field paths and messages (k8s.io/apiextensions-apiserver
 * pkg/apis/apiextensions/validation/validation.go and pkg/apiserver/schema/validation.go):
 * metadata.name = plural.group, group, scope, names, versions (unique, exactly one storage
 * version), per-version schemas (required, structural), defaults that validate, list and map
 * markers, x-kubernetes-validations that compile and whose estimated cost fits v1.25's limits,
 * subresources, additionalPrinterColumns, conversion, and on update the immutable fields and
 * status.storedVersions.
 */
import { FieldPath, GoValue, goQuote, type FieldError } from '../apis/validation';
import { forbidden, invalid, notSupported, required } from '../apis/validation/field-error';
import { isDNS1035Label, isDNS1123Subdomain } from '../apis/validation/name-validation';
import { validateGenericObjectMeta, validateGenericObjectMetaUpdate } from '../apis/validation/object-meta-validation';
import { validateSchemaRules } from './cel/cel-entry-points';
import { crdSpec, isConditionTrue, namesOf, versionsOf } from './crd-model';
import { compileGoRegexp } from './go-regexp';
import { additionalSchema, type JsonSchemaProps } from './json-schema';
import { validateAgainstSchema } from './schema-validation';
import { deepCopy, isJsonObject, type JsonObject } from '../apis/object';


// printerColumnDatatypes and customResourceColumnDefinitionFormats, in the sorted order of their messages.
const PRINTER_COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const PRINTER_COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];

type Level = 'root' | 'item' | 'field';

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** The structural-schema rules (pkg/apiserver/schema/validation.go validateStructuralInvariants), sorted by message as v1.25 sorts them. */
export function validateStructural(schema: JsonSchemaProps, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  structuralInvariants(schema, 'root', path, errs);
  return errs.sort((a, b) => (messageOf(a) < messageOf(b) ? -1 : messageOf(a) > messageOf(b) ? 1 : 0));
}

function messageOf(e: FieldError): string {
  return `${e.field}: ${e.type}: ${e.detail}`;
}

function structuralInvariants(s: JsonSchemaProps, level: Level, path: FieldPath, errs: FieldError[]): void {
  if (s.type === 'array' && s.items === undefined) errs.push(required(path.child('items'), 'must be specified'));
  if (s.items !== undefined) structuralInvariants(s.items, 'item', path.child('items'), errs);
  for (const [name, property] of Object.entries(s.properties ?? {})) {
    if (isJsonObject(property)) structuralInvariants(property, 'field', path.child('properties').key(name), errs);
  }
  if (s.additionalProperties !== undefined && s.additionalProperties !== true) {
    if (level === 'root') errs.push(forbidden(path.child('additionalProperties'), 'must not be used at the root'));
    const extra = additionalSchema(s);
    if (extra !== undefined) structuralInvariants(extra, 'field', path.child('additionalProperties'), errs);
    if (Object.keys(s.properties ?? {}).length > 0) errs.push(forbidden(path.child('additionalProperties'), 'additionalProperties and properties are mutual exclusive'));
  }
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (intOrString && preserve) errs.push(invalid(path.child('x-kubernetes-preserve-unknown-fields'), true, 'must be false if x-kubernetes-int-or-string is true'));
  if (intOrString && embedded) errs.push(invalid(path.child('x-kubernetes-embedded-resource'), true, 'must be false if x-kubernetes-int-or-string is true'));
  const skipAnyOf = intOrString && isIntOrStringAnyOf(s.anyOf);
  const skipFirstAllOf = intOrString && Array.isArray(s.allOf) && s.allOf.length > 0 && isIntOrStringAnyOf(s.allOf[0]?.anyOf);
  if (!skipAnyOf) (s.anyOf ?? []).forEach((v, i) => nestedValueValidation(v, false, path.child('anyOf').index(i), errs));
  (s.allOf ?? []).forEach((v, i) => nestedValueValidation(v, skipFirstAllOf && i === 0, path.child('allOf').index(i), errs));
  (s.oneOf ?? []).forEach((v, i) => nestedValueValidation(v, false, path.child('oneOf').index(i), errs));
  if (s.not !== undefined) nestedValueValidation(s.not, false, path.child('not'), errs);
  validatePattern(s, path, errs);
  const checkMetadata = level === 'root' || embedded;
  const type = s.type ?? '';
  if (embedded && type !== 'object') {
    if (type === '') errs.push(required(path.child('type'), 'must be object if x-kubernetes-embedded-resource is true'));
    else errs.push(invalid(path.child('type'), type, 'must be object if x-kubernetes-embedded-resource is true'));
  } else if (type === '' && !intOrString && !preserve) {
    const where = level === 'root' ? 'at the root' : level === 'item' ? 'for specified array items' : 'for specified object fields';
    errs.push(required(path.child('type'), `must not be empty ${where}`));
  }
  if (embedded && s.additionalProperties !== undefined) errs.push(forbidden(path.child('additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'));
  if (level === 'root' && type !== '' && type !== 'object') errs.push(invalid(path.child('type'), type, 'must be object at the root'));
  const properties = s.properties ?? {};
  if (checkMetadata && properties.kind !== undefined && properties.kind.type !== 'string') errs.push(invalid(path.child('properties').key('kind').child('type'), properties.kind.type ?? '', 'must be string'));
  if (checkMetadata && properties.apiVersion !== undefined && properties.apiVersion.type !== 'string') errs.push(invalid(path.child('properties').key('apiVersion').child('type'), properties.apiVersion.type ?? '', 'must be string'));
  if (checkMetadata && properties.metadata !== undefined && properties.metadata.type !== 'object') errs.push(invalid(path.child('properties').key('metadata').child('type'), properties.metadata.type ?? '', 'must be object'));
  if (level === 'root' && properties.metadata !== undefined) {
    const { type: _t, properties: metaProperties, default: _d, ...rest } = properties.metadata;
    const names = Object.keys(metaProperties ?? {});
    const onlyNames = names.every((n) => n === 'name' || n === 'generateName');
    if (!onlyNames || Object.keys(rest).length > 0) {
      errs.push(forbidden(path.child('properties').key('metadata'), 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
    }
  }
  if (embedded && !preserve && Object.keys(properties).length === 0) {
    errs.push(required(path.child('properties'), 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
  }
  if (s.uniqueItems === true) errs.push(forbidden(path.child('uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  if ((s as JsonObject).$ref !== undefined) errs.push(forbidden(path.child('$ref'), '$ref is not supported'));
  const listType = s['x-kubernetes-list-type'];
  if (listType !== undefined) {
    if (type !== 'array') errs.push(invalid(path.child('x-kubernetes-list-type'), listType, 'must only be used on type=array'));
    else if (!['atomic', 'set', 'map'].includes(listType)) errs.push(notSupported(path.child('x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']));
    else if (listType === 'map') {
      const keys = s['x-kubernetes-list-map-keys'] ?? [];
      if (keys.length === 0) errs.push(required(path.child('x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'));
      if (s.items?.type !== 'object') errs.push(invalid(path.child('items').child('type'), s.items?.type ?? '', 'must be object when x-kubernetes-list-type is map'));
      for (const [i, key] of keys.entries()) {
        const keySchema = s.items?.properties?.[key];
        if (keySchema === undefined) errs.push(invalid(path.child('x-kubernetes-list-map-keys').index(i), key, 'entries must all be names of item properties'));
        else if (keySchema.type !== 'string' && keySchema.type !== 'integer' && keySchema['x-kubernetes-int-or-string'] !== true) {
          errs.push(invalid(path.child('items').child('properties').key(key).child('type'), keySchema.type ?? '', 'must be a scalar type if parent array is a list-map'));
        }
      }
    } else if (listType === 'set' && s.items !== undefined && s.items.type === 'object') {
      errs.push(invalid(path.child('items').child('type'), 'object', 'must be a scalar type if parent array is a list-set'));
    }
  } else if (s['x-kubernetes-list-map-keys'] !== undefined) {
    errs.push(forbidden(path.child('x-kubernetes-list-map-keys'), 'must not be set if x-kubernetes-list-type is not map'));
  }
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular') errs.push(notSupported(path.child('x-kubernetes-map-type'), mapType, ['atomic', 'granular']));
}

function isIntOrStringAnyOf(anyOf: JsonSchemaProps[] | undefined): boolean {
  return Array.isArray(anyOf) && anyOf.length === 2 && anyOf[0]?.type === 'integer' && anyOf[1]?.type === 'string' && Object.keys(anyOf[0]).length === 1 && Object.keys(anyOf[1]).length === 1;
}

/** What a value validation under anyOf/allOf/oneOf/not may not say (validateNestedValueValidation). */
function nestedValueValidation(v: JsonSchemaProps, skipAnyOf: boolean, path: FieldPath, errs: FieldError[]): void {
  if (typeof v !== 'object' || v === null) return;
  if (!skipAnyOf) (v.anyOf ?? []).forEach((c, i) => nestedValueValidation(c, false, path.child('anyOf').index(i), errs));
  (v.allOf ?? []).forEach((c, i) => nestedValueValidation(c, false, path.child('allOf').index(i), errs));
  (v.oneOf ?? []).forEach((c, i) => nestedValueValidation(c, false, path.child('oneOf').index(i), errs));
  if (v.not !== undefined) nestedValueValidation(v.not, false, path.child('not'), errs);
  if (v.items !== undefined) nestedValueValidation(v.items, false, path.child('items'), errs);
  for (const [name, property] of Object.entries(v.properties ?? {})) nestedValueValidation(property, false, path.child('properties').key(name), errs);
  if (!skipAnyOf && typeof v.type === 'string' && v.type !== '') errs.push(forbidden(path.child('type'), 'must be empty to be structural'));
  if (v.additionalProperties !== undefined) errs.push(forbidden(path.child('additionalProperties'), 'must be undefined to be structural'));
  if (v.default !== undefined) errs.push(forbidden(path.child('default'), 'must be undefined to be structural'));
  if (typeof v.title === 'string' && v.title !== '') errs.push(forbidden(path.child('title'), 'must be empty to be structural'));
  if (typeof v.description === 'string' && v.description !== '') errs.push(forbidden(path.child('description'), 'must be empty to be structural'));
  if (v.nullable === true) errs.push(forbidden(path.child('nullable'), 'must be false to be structural'));
  if (v['x-kubernetes-preserve-unknown-fields'] === true) errs.push(forbidden(path.child('x-kubernetes-preserve-unknown-fields'), 'must be false to be structural'));
  if (v['x-kubernetes-embedded-resource'] === true) errs.push(forbidden(path.child('x-kubernetes-embedded-resource'), 'must be false to be structural'));
  if (v['x-kubernetes-int-or-string'] === true) errs.push(forbidden(path.child('x-kubernetes-int-or-string'), 'must be false to be structural'));
  if ((v['x-kubernetes-list-map-keys'] ?? []).length > 0) errs.push(forbidden(path.child('x-kubernetes-list-map-keys'), 'must be empty to be structural'));
  if (v['x-kubernetes-list-type'] !== undefined) errs.push(forbidden(path.child('x-kubernetes-list-type'), 'must be undefined to be structural'));
  if (v.properties?.metadata !== undefined) errs.push(forbidden(path.child('properties').key('metadata'), 'must not be specified in a nested context'));
  validatePattern(v, path, errs);
}

/** A pattern must compile as Go's regexp does (validateValueValidation), under junctors too. */
function validatePattern(s: JsonSchemaProps, path: FieldPath, errs: FieldError[]): void {
  if (typeof s.pattern !== 'string' || s.pattern === '') return;
  const compilation = compileGoRegexp(s.pattern);
  if (!compilation.ok) errs.push(invalid(path.child('pattern'), s.pattern, `must be a valid regular expression, but isn't: ${compilation.message}`));
}

/** Defaults must validate against their own schema, and may not sit under metadata (except name/generateName). */
function validateDefaults(schema: JsonSchemaProps, path: FieldPath, errs: FieldError[]): void {
  const visit = (s: JsonSchemaProps, p: FieldPath): void => {
    if (s.default !== undefined) {
      const problems = validateAgainstSchema(deepCopy(s.default), { ...s, default: undefined }, FieldPath.root());
      for (const problem of problems) errs.push({ ...problem, field: p.child('default').toString() + (problem.field === '' ? '' : `.${problem.field}`) });
    }
    for (const [name, property] of Object.entries(s.properties ?? {})) if (isJsonObject(property)) visit(property, p.child('properties').key(name));
    if (s.items !== undefined) visit(s.items, p.child('items'));
    const extra = additionalSchema(s);
    if (extra !== undefined) visit(extra, p.child('additionalProperties'));
  };
  visit(schema, path);
}

/** validateSimpleJSONPath: v1.25 only asks for a leading dot (printer columns and scale paths alike). */
function simpleJsonPathErrors(path: string, at: FieldPath): FieldError[] {
  if (path === '') return [invalid(at, path, 'must not be empty')];
  if (!path.startsWith('.')) return [invalid(at, path, 'must be a simple json path starting with .')];
  return [];
}

function validateVersion(version: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const name = typeof version.name === 'string' ? version.name : '';
  for (const message of isDNS1035Label(name)) errs.push(invalid(path.child('name'), name, message));
  const schemaHolder = isJsonObject(version.schema) ? version.schema : undefined;
  const schema = schemaHolder?.openAPIV3Schema;
  const schemaPath = path.child('schema', 'openAPIV3Schema');
  if (!isJsonObject(schema)) {
    errs.push(required(schemaPath, 'schemas are required'));
  } else {
    const s = schema as JsonSchemaProps;
    const structural = validateStructural(s, schemaPath);
    errs.push(...structural);
    if (structural.length === 0) {
      validateDefaults(s, schemaPath, errs);
      errs.push(...validateSchemaRules(s, schemaPath));
    }
  }
  const subresources = isJsonObject(version.subresources) ? version.subresources : undefined;
  if (subresources !== undefined && isJsonObject(subresources.scale)) {
    const scale = subresources.scale;
    const scalePath = path.child('subresources', 'scale');
    const spec = typeof scale.specReplicasPath === 'string' ? scale.specReplicasPath : '';
    const status = typeof scale.statusReplicasPath === 'string' ? scale.statusReplicasPath : '';
    const replicasPath = (value: string, at: FieldPath, prefix: string): void => {
      if (value === '') {
        errs.push(required(at, ''));
        return;
      }
      const problems = simpleJsonPathErrors(value, at);
      if (problems.length > 0) errs.push(...problems);
      else if (!value.startsWith(`${prefix}.`)) errs.push(invalid(at, value, `should be a json path under ${prefix}`));
    };
    replicasPath(spec, scalePath.child('specReplicasPath'), '.spec');
    replicasPath(status, scalePath.child('statusReplicasPath'), '.status');
    const selector = scale.labelSelectorPath;
    if (typeof selector === 'string' && selector !== '') {
      const problems = simpleJsonPathErrors(selector, scalePath.child('labelSelectorPath'));
      if (problems.length > 0) errs.push(...problems);
      else if (!selector.startsWith('.spec.') && !selector.startsWith('.status.')) errs.push(invalid(scalePath.child('labelSelectorPath'), selector, 'should be a json path under either .spec or .status'));
    }
  }
  const columns = Array.isArray(version.additionalPrinterColumns) ? version.additionalPrinterColumns : [];
  columns.forEach((column, i) => {
    const columnPath = path.child('additionalPrinterColumns').index(i);
    if (!isJsonObject(column)) return;
    // ValidateCustomResourceColumnDefinition: the jsonPath error names the internal field, JSONPath.
    if (typeof column.name !== 'string' || column.name === '') errs.push(required(columnPath.child('name'), ''));
    const type = typeof column.type === 'string' ? column.type : '';
    const types = `must be one of ${PRINTER_COLUMN_TYPES.join(',')}`;
    if (type === '') errs.push(required(columnPath.child('type'), types));
    else if (!PRINTER_COLUMN_TYPES.includes(type)) errs.push(invalid(columnPath.child('type'), type, types));
    if (typeof column.format === 'string' && column.format !== '' && !PRINTER_COLUMN_FORMATS.includes(column.format)) {
      errs.push(invalid(columnPath.child('format'), column.format, `must be one of ${PRINTER_COLUMN_FORMATS.join(',')}`));
    }
    const jsonPath = typeof column.jsonPath === 'string' ? column.jsonPath : '';
    if (jsonPath === '') errs.push(required(columnPath.child('JSONPath'), ''));
    else errs.push(...simpleJsonPathErrors(jsonPath, columnPath.child('JSONPath')));
  });
}

function validateNames(names: JsonObject, path: FieldPath, errs: FieldError[], requireAll: boolean): void {
  const plural = typeof names.plural === 'string' ? names.plural : '';
  const singular = typeof names.singular === 'string' ? names.singular : '';
  const kind = typeof names.kind === 'string' ? names.kind : '';
  const listKind = typeof names.listKind === 'string' ? names.listKind : '';
  if (requireAll) {
    if (plural === '') errs.push(required(path.child('plural'), ''));
    if (singular === '') errs.push(required(path.child('singular'), ''));
    if (kind === '') errs.push(required(path.child('kind'), ''));
    if (listKind === '') errs.push(required(path.child('listKind'), ''));
  }
  if (plural !== '') for (const m of isDNS1035Label(plural)) errs.push(invalid(path.child('plural'), plural, m));
  if (singular !== '') for (const m of isDNS1035Label(singular)) errs.push(invalid(path.child('singular'), singular, m));
  if (kind !== '') {
    const problems = isDNS1035Label(kind.toLowerCase());
    if (problems.length > 0) errs.push(invalid(path.child('kind'), kind, `may have mixed case, but should otherwise match: ${problems.join(',')}`));
  }
  if (listKind !== '') {
    const problems = isDNS1035Label(listKind.toLowerCase());
    if (problems.length > 0) errs.push(invalid(path.child('listKind'), listKind, `may have mixed case, but should otherwise match: ${problems.join(',')}`));
  }
  strings(names.shortNames).forEach((shortName, i) => {
    for (const m of isDNS1035Label(shortName)) errs.push(invalid(path.child('shortNames').index(i), shortName, m));
  });
  if (kind !== '' && kind === listKind) errs.push(invalid(path.child('listKind'), listKind, 'kind and listKind may not be the same'));
  strings(names.categories).forEach((category, i) => {
    for (const m of isDNS1035Label(category)) errs.push(invalid(path.child('categories').index(i), category, m));
  });
}

function validateSpec(crd: JsonObject, errs: FieldError[]): void {
  const spec = crdSpec(crd);
  const path = FieldPath.root('spec');
  const group = typeof spec.group === 'string' ? spec.group : '';
  if (group === '') errs.push(required(path.child('group'), ''));
  else if (isDNS1123Subdomain(group).length > 0) errs.push(invalid(path.child('group'), group, isDNS1123Subdomain(group).join(',')));
  else if (group.split('.').length < 2) errs.push(invalid(path.child('group'), group, 'should be a domain with at least one dot'));
  const scope = typeof spec.scope === 'string' ? spec.scope : '';
  if (scope === '') errs.push(required(path.child('scope'), ''));
  else if (scope !== 'Cluster' && scope !== 'Namespaced') errs.push(notSupported(path.child('scope'), scope, ['Cluster', 'Namespaced']));
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isJsonObject) : [];
  if (versions.length === 0) errs.push(invalid(path.child('versions'), new GoValue('[]apiextensions.CustomResourceDefinitionVersion(nil)'), 'must have exactly one version marked as storage version'));
  const seen = new Set<string>();
  let unique = true;
  let storageCount = 0;
  versions.forEach((version, i) => {
    if (version.storage === true) storageCount++;
    const name = String(version.name ?? '');
    if (seen.has(name)) unique = false;
    seen.add(name);
    if (version.served !== true && version.storage === true) {
      // v1.25 allows a storage version that is not served.
    }
    validateVersion(version, path.child('versions').index(i), errs);
  });
  const shownVersions = new GoValue(`[]apiextensions.CustomResourceDefinitionVersion{${versions.map((v) => `apiextensions.CustomResourceDefinitionVersion{Name:${goQuote(String(v.name ?? ''))}, Served:${v.served === true}, Storage:${v.storage === true}, ...}`).join(', ')}}`);
  if (!unique) errs.push(invalid(path.child('versions'), shownVersions, 'must contain unique version names'));
  if (versions.length > 0 && storageCount !== 1) errs.push(invalid(path.child('versions'), shownVersions, 'must have exactly one version marked as storage version'));
  if (versions.length > 0 && !versions.some((v) => v.served === true)) errs.push(invalid(path.child('versions'), shownVersions, 'must have at least one version marked as served'));
  const names = isJsonObject(spec.names) ? spec.names : {};
  validateNames(names, path.child('names'), errs, true);
  if (spec.preserveUnknownFields === true) errs.push(invalid(path.child('preserveUnknownFields'), true, 'must be false'));
  const conversion = isJsonObject(spec.conversion) ? spec.conversion : undefined;
  if (conversion !== undefined) {
    const conversionPath = path.child('conversion');
    const strategy = typeof conversion.strategy === 'string' ? conversion.strategy : '';
    if (strategy !== 'None' && strategy !== 'Webhook') errs.push(notSupported(conversionPath.child('strategy'), strategy, ['None', 'Webhook']));
    if (strategy === 'Webhook') {
      const webhook = isJsonObject(conversion.webhook) ? conversion.webhook : undefined;
      if (webhook === undefined) {
        errs.push(required(conversionPath.child('webhook'), 'required when strategy is set to Webhook'));
      } else {
        const reviewVersions = strings(webhook.conversionReviewVersions);
        if (reviewVersions.length === 0) errs.push(required(conversionPath.child('webhook', 'conversionReviewVersions'), 'must include at least one of v1, v1beta1'));
        else if (!reviewVersions.some((v) => v === 'v1' || v === 'v1beta1')) errs.push(invalid(conversionPath.child('webhook', 'conversionReviewVersions'), new GoValue(`[]string{${reviewVersions.map(goQuote).join(', ')}}`), 'must include at least one of v1, v1beta1'));
        const client = isJsonObject(webhook.clientConfig) ? webhook.clientConfig : undefined;
        const clientPath = conversionPath.child('webhook', 'clientConfig');
        if (client === undefined || (client.url === undefined) === (client.service === undefined)) {
          errs.push(required(clientPath, 'exactly one of url or service is required'));
        } else if (typeof client.url === 'string') {
          let parsed: URL | undefined;
          try {
            parsed = new URL(client.url);
          } catch {
            parsed = undefined;
          }
          if (parsed === undefined || parsed.protocol !== 'https:') errs.push(invalid(clientPath.child('url'), client.url, "'https' is the only allowed URL scheme"));
        } else if (isJsonObject(client.service)) {
          if (typeof client.service.name !== 'string' || client.service.name === '') errs.push(required(clientPath.child('service', 'name'), 'service name is required'));
          if (typeof client.service.namespace !== 'string' || client.service.namespace === '') errs.push(required(clientPath.child('service', 'namespace'), 'service namespace is required'));
        }
      }
    } else if (conversion.webhook !== undefined && isJsonObject(conversion.webhook) && conversion.webhook.clientConfig !== undefined) {
      errs.push(forbidden(conversionPath.child('webhook', 'clientConfig'), 'should not be set when strategy is not set to Webhook'));
    }
  }
}

function validateStatus(crd: JsonObject, errs: FieldError[]): void {
  const status = isJsonObject(crd.status) ? crd.status : {};
  if (isJsonObject(status.acceptedNames)) validateNames(status.acceptedNames, FieldPath.root('status', 'acceptedNames'), errs, false);
}

/** The field errors v1.25 reports when creating `crd` (already defaulted). */
export function validateCrdCreate(crd: JsonObject): FieldError[] {
  const spec = crdSpec(crd);
  const names = namesOf(spec.names);
  const group = typeof spec.group === 'string' ? spec.group : '';
  const nameFn = (name: string, prefix: boolean): string[] => {
    const problems = isDNS1123Subdomain(prefix ? `${name}a` : name);
    if (name !== `${names.plural}.${group}`) problems.push('must be spec.names.plural+"."+spec.group');
    return problems;
  };
  const errs = validateGenericObjectMeta(isJsonObject(crd.metadata) ? crd.metadata : {}, false, nameFn, FieldPath.root('metadata'));
  validateSpec(crd, errs);
  validateStatus(crd, errs);
  return errs;
}

/** The field errors of an update: the create rules, immutable fields, and storedVersions that must stay listed. */
export function validateCrdUpdate(crd: JsonObject, old: JsonObject): FieldError[] {
  const errs = validateGenericObjectMetaUpdate(isJsonObject(crd.metadata) ? crd.metadata : {}, isJsonObject(old.metadata) ? old.metadata : {}, FieldPath.root('metadata'));
  validateSpec(crd, errs);
  const spec = crdSpec(crd);
  const oldSpec = crdSpec(old);
  const path = FieldPath.root('spec');
  if (isConditionTrue(old, 'Established')) {
    if (spec.scope !== oldSpec.scope) errs.push(invalid(path.child('scope'), spec.scope, 'field is immutable'));
    if (namesOf(spec.names).kind !== namesOf(oldSpec.names).kind) errs.push(invalid(path.child('names', 'kind'), namesOf(spec.names).kind, 'field is immutable'));
  }
  if (spec.group !== oldSpec.group) errs.push(invalid(path.child('group'), spec.group, 'field is immutable'));
  if (namesOf(spec.names).plural !== namesOf(oldSpec.names).plural) errs.push(invalid(path.child('names', 'plural'), namesOf(spec.names).plural, 'field is immutable'));
  validateStatus(crd, errs);
  errs.push(...validateStoredVersions(crd));
  return errs;
}

/** Status updates check names and storedVersions only. */
export function validateCrdStatusUpdate(crd: JsonObject, old: JsonObject): FieldError[] {
  const errs = validateGenericObjectMetaUpdate(isJsonObject(crd.metadata) ? crd.metadata : {}, isJsonObject(old.metadata) ? old.metadata : {}, FieldPath.root('metadata'));
  validateStatus(crd, errs);
  errs.push(...validateStoredVersions(crd));
  return errs;
}

function validateStoredVersions(crd: JsonObject): FieldError[] {
  const stored = strings((isJsonObject(crd.status) ? crd.status : {}).storedVersions);
  const declared = new Set(versionsOf(crd).map((v) => v.name));
  const errs: FieldError[] = [];
  stored.forEach((version, i) => {
    if (!declared.has(version)) errs.push(invalid(FieldPath.root('status', 'storedVersions').index(i), version, 'must appear in spec.versions'));
  });
  return errs;
}
