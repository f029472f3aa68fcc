/**
 * APIServices (kube-aggregator pkg/registry/apiservice/strategy.go, v1.25): a new APIService
 * starts with an empty status, except that a local one (no service) is Available at once
 * (reason Local), as the availability controller would soon say; updates of the main resource
 * keep the status, and status updates keep the spec and the labels, annotations, finalizers and
 * owner references. The strategy declares no reset fields (kube's has no GetResetFields).
 */
import { ensureObject } from '../../apis/defaulting';
import { keepOldField } from './object-fields';
import type { KindRules } from './kind-rules';
import type { JsonObject } from '../../apis/object';

function nowRfc3339(): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function isLocal(apiService: JsonObject): boolean {
  const service = (apiService.spec as JsonObject | undefined)?.service;
  return service === undefined || service === null;
}

export const apiServiceRules: KindRules = {
  hasStatusSubresource: true,
  specField: 'spec',
  tracksGeneration: false,
  initialStatus: (apiService) => (isLocal(apiService)
    ? { conditions: [{ type: 'Available', status: 'True', lastTransitionTime: nowRfc3339(), reason: 'Local', message: 'Local APIServices are always available' }] }
    : {}),
  prepareForStatusUpdate: (apiService, old) => {
    const metadata = ensureObject(apiService, 'metadata');
    const oldMetadata = ensureObject(old, 'metadata');
    for (const key of ['labels', 'annotations', 'finalizers', 'ownerReferences']) keepOldField(metadata, oldMetadata, key);
  },
  resetFields: { '': [], status: [] },
};
