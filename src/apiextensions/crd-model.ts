/**
 * Reading a stored apiextensions.k8s.io/v1 CustomResourceDefinition: its names, scope, versions
 * (served, storage, deprecation), per-version schema, subresources and printer columns, its
 * conversion strategy and its conditions. Plain JSON in, typed views out; never changes the CRD.
 * Field names are those of k8s.io/apiextensions-apiserver pkg/apis/apiextensions/v1 types.go.
 */
import { type JsonSchemaProps } from './json-schema';
import { isJsonObject, type JsonObject } from '../apis/object';

export const CRD_GROUP = 'apiextensions.k8s.io';
export const CRD_RESOURCE = 'customresourcedefinitions';
export const CRD_KIND = 'CustomResourceDefinition';
/** The finalizer that holds a CRD until every object of it is gone (apiextensions.CustomResourceCleanupFinalizer). */
export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

export interface CrdNames {
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  shortNames: string[];
  categories: string[];
}

export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority: number;
  jsonPath: string;
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated: boolean;
  deprecationWarning?: string;
  schema?: JsonSchemaProps;
  hasStatus: boolean;
  scale?: ScaleSubresource;
  printerColumns: PrinterColumn[];
}

export interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port: number };
  caBundle?: string;
}

export interface CrdConversion {
  strategy: 'None' | 'Webhook';
  clientConfig?: WebhookClientConfig;
  reviewVersions: string[];
}

export interface CrdCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function obj(value: unknown): JsonObject {
  return isJsonObject(value) ? value : {};
}

export function crdSpec(crd: JsonObject): JsonObject {
  return obj(crd.spec);
}

export function crdStatus(crd: JsonObject): JsonObject {
  return obj(crd.status);
}

export function crdName(crd: JsonObject): string {
  return str(obj(crd.metadata).name);
}

export function crdGroup(crd: JsonObject): string {
  return str(crdSpec(crd).group);
}

export function isNamespaced(crd: JsonObject): boolean {
  return crdSpec(crd).scope !== 'Cluster';
}

export function namesOf(value: unknown): CrdNames {
  const names = obj(value);
  const kind = str(names.kind);
  return {
    plural: str(names.plural),
    singular: str(names.singular) || kind.toLowerCase(),
    kind,
    listKind: str(names.listKind) || (kind === '' ? '' : `${kind}List`),
    shortNames: strings(names.shortNames),
    categories: strings(names.categories),
  };
}

export function specNames(crd: JsonObject): CrdNames {
  return namesOf(crdSpec(crd).names);
}

export function acceptedNames(crd: JsonObject): CrdNames {
  return namesOf(crdStatus(crd).acceptedNames);
}

export function versionsOf(crd: JsonObject): CrdVersion[] {
  const versions = crdSpec(crd).versions;
  if (!Array.isArray(versions)) return [];
  return versions.filter(isJsonObject).map((version) => {
    const subresources = obj(version.subresources);
    const scale = isJsonObject(subresources.scale) ? subresources.scale : undefined;
    const schema = obj(version.schema).openAPIV3Schema;
    return {
      name: str(version.name),
      served: version.served === true,
      storage: version.storage === true,
      deprecated: version.deprecated === true,
      deprecationWarning: typeof version.deprecationWarning === 'string' ? version.deprecationWarning : undefined,
      schema: isJsonObject(schema) ? (schema as JsonSchemaProps) : undefined,
      hasStatus: isJsonObject(subresources.status),
      scale: scale === undefined ? undefined : {
        specReplicasPath: str(scale.specReplicasPath),
        statusReplicasPath: str(scale.statusReplicasPath),
        labelSelectorPath: typeof scale.labelSelectorPath === 'string' ? scale.labelSelectorPath : undefined,
      },
      printerColumns: (Array.isArray(version.additionalPrinterColumns) ? version.additionalPrinterColumns : []).filter(isJsonObject).map((c) => ({
        name: str(c.name),
        type: str(c.type),
        format: typeof c.format === 'string' && c.format !== '' ? c.format : undefined,
        description: typeof c.description === 'string' ? c.description : undefined,
        priority: typeof c.priority === 'number' ? c.priority : 0,
        jsonPath: str(c.jsonPath),
      })),
    };
  });
}

export function storageVersion(crd: JsonObject): CrdVersion | undefined {
  return versionsOf(crd).find((v) => v.storage);
}

export function conversionOf(crd: JsonObject): CrdConversion {
  const conversion = obj(crdSpec(crd).conversion);
  const webhook = obj(conversion.webhook);
  const client = obj(webhook.clientConfig);
  const service = isJsonObject(client.service) ? client.service : undefined;
  return {
    strategy: conversion.strategy === 'Webhook' ? 'Webhook' : 'None',
    clientConfig: isJsonObject(webhook.clientConfig) ? {
      url: typeof client.url === 'string' ? client.url : undefined,
      service: service === undefined ? undefined : { namespace: str(service.namespace), name: str(service.name), path: typeof service.path === 'string' ? service.path : undefined, port: typeof service.port === 'number' ? service.port : 443 },
      caBundle: typeof client.caBundle === 'string' ? client.caBundle : undefined,
    } : undefined,
    reviewVersions: strings(webhook.conversionReviewVersions),
  };
}

export function conditionsOf(crd: JsonObject): CrdCondition[] {
  const conditions = crdStatus(crd).conditions;
  return Array.isArray(conditions) ? conditions.filter(isJsonObject).map((c) => c as unknown as CrdCondition) : [];
}

export function isConditionTrue(crd: JsonObject, type: string): boolean {
  return conditionsOf(crd).some((c) => c.type === type && c.status === 'True');
}

/**
 * Sets a condition as apiextensions' SetCRDCondition does: lastTransitionTime changes only when
 * the status does. Returns the new conditions list; `crd` is not changed.
 */
export function withCondition(crd: JsonObject, condition: CrdCondition, now: string): CrdCondition[] {
  const existing = conditionsOf(crd);
  const index = existing.findIndex((c) => c.type === condition.type);
  if (index < 0) return [...existing, { ...condition, lastTransitionTime: now }];
  const previous = existing[index];
  const updated = { ...condition, lastTransitionTime: previous.status === condition.status && previous.lastTransitionTime !== undefined ? previous.lastTransitionTime : now };
  return existing.map((c, i) => (i === index ? updated : c));
}
