/** PersistentVolumeClaims: with AnyVolumeDataSource (beta, on in v1.25) dataSource and dataSourceRef mirror each other. */
import { childObject, isUnset } from '../../apis/defaulting';
import { withStatus, type KindRules } from './kind-rules';
import { deepCopy, type JsonObject } from '../../apis/object';

function normalizeClaimDataSources(claim: JsonObject): void {
  const spec = childObject(claim, 'spec');
  if (spec === undefined) return;
  if (!isUnset(spec.dataSource) && isUnset(spec.dataSourceRef)) spec.dataSourceRef = deepCopy(spec.dataSource);
  else if (!isUnset(spec.dataSourceRef) && isUnset(spec.dataSource)) spec.dataSource = deepCopy(spec.dataSourceRef);
}

export const persistentVolumeClaimRules: KindRules = withStatus(() => ({ phase: 'Pending' }), {
  prepareForCreate: normalizeClaimDataSources,
  prepareForUpdate: normalizeClaimDataSources,
});
