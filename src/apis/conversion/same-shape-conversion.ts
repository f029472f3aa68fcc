/**
 * A family whose versions have identical shapes: conversion only rewrites apiVersion.
 */
import { ConversionFamily } from './conversion-family';
import { withApiVersion } from './json-object';
import type { JsonObject } from '../object';

export function sameShapeConversion(kind: string, hubApiVersion: string, otherApiVersions: readonly string[]): ConversionFamily {
  return {
    kind,
    hubApiVersion,
    apiVersions: [hubApiVersion, ...otherApiVersions],
    toHub: (object: JsonObject) => withApiVersion(object, hubApiVersion),
    fromHub: (hub: JsonObject, apiVersion: string) => withApiVersion(hub, apiVersion),
  };
}
