import { applyDefaults } from '../../../../../src/apis/defaulting';
import { strategyOfObject } from '../../registry/strategies/strategy-of-object';
import type { JsonObject } from '../../../../../src/apis/object';

/** What a create returns, minus server-assigned metadata: decode defaults, then the create strategy. */
export function createdAsServer(sent: JsonObject): JsonObject {
  const object = structuredClone(sent);
  applyDefaults(object);
  strategyOfObject(object).prepareForCreate(object);
  return object;
}

/** Only decode defaulting, as for an object nested in a request or read back. */
export function defaulted(sent: JsonObject): JsonObject {
  const object = structuredClone(sent);
  applyDefaults(object);
  return object;
}
