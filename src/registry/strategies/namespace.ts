/**
 * Namespaces (pkg/registry/core/namespace): phase Active and the `kubernetes` finalizer at
 * creation; updates keep spec.finalizers, which only namespaces/finalize changes; a deleted
 * namespace becomes Terminating and stays while spec.finalizers (the namespace controller's)
 * is not empty.
 */
import { ensureObject } from '../../apis/defaulting';
import { keepOldField } from './object-fields';
import { withStatus, type KindRules } from './kind-rules';
import { deepCopy, type JsonObject } from '../../apis/object';

function hasSpecFinalizers(namespace: JsonObject): boolean {
  const finalizers = (namespace.spec as JsonObject | undefined)?.finalizers;
  return Array.isArray(finalizers) && finalizers.length > 0;
}

export const namespaceRules: KindRules = withStatus(() => ({ phase: 'Active' }), {
  // The kubernetes finalizer is required at creation, but may be removed over the object's life.
  prepareForCreate: (namespace) => {
    const spec = ensureObject(namespace, 'spec');
    const finalizers = Array.isArray(spec.finalizers) ? spec.finalizers : [];
    if (!finalizers.includes('kubernetes')) spec.finalizers = [...finalizers, 'kubernetes'];
  },
  prepareForUpdate: (namespace, old) => keepOldField(ensureObject(namespace, 'spec'), ensureObject(old, 'spec'), 'finalizers'),
  prepareForSubresourceUpdate: (subresource, namespace, old) => {
    if (subresource !== 'finalize') return;
    // namespaces/finalize changes spec.finalizers and nothing else (FinalizeREST).
    const finalizers = (namespace.spec as JsonObject | undefined)?.finalizers;
    // The managed fields were recorded for this write before the strategy ran: they stay.
    const managedFields = (namespace.metadata as JsonObject | undefined)?.managedFields;
    for (const key of Object.keys(namespace)) delete namespace[key];
    Object.assign(namespace, deepCopy(old));
    namespace.spec = { ...((old.spec as JsonObject | undefined) ?? {}), finalizers: Array.isArray(finalizers) ? finalizers : [] };
    const metadata = ensureObject(namespace, 'metadata');
    if (managedFields === undefined) delete metadata.managedFields;
    else metadata.managedFields = managedFields;
  },
  resetFields: { finalize: [['status']] },
  prepareForDeletion: (namespace) => {
    namespace.status = { ...((namespace.status as JsonObject | undefined) ?? {}), phase: 'Terminating' };
  },
  hasPendingFinalizers: hasSpecFinalizers,
  returnsDeletedObject: true,
});
