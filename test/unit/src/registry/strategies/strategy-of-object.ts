import { defineStrategy, strategyFor } from '../../../../../src/registry/strategies';
import type { ResourceStrategy } from '../../../../../src/registry';
import type { JsonObject } from '../../../../../src/apis/object';

/**
 * The strategy the registry uses for an object of this apiVersion and kind. The resource name
 * only matters to field selectors, which these tests do not use.
 */
export function strategyOfObject(object: JsonObject): ResourceStrategy {
  // A malformed object names no kind: nothing kind-specific applies to it.
  if (typeof object.apiVersion !== 'string' || typeof object.kind !== 'string') return defineStrategy('', '', {});
  const apiVersion = object.apiVersion;
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  return strategyFor({ group, resource: `${String(object.kind).toLowerCase()}s`, kind: String(object.kind) });
}
