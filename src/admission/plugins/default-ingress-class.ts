/**
 * DefaultIngressClass (default on; kubernetes plugin/pkg/admission/network/defaultingressclass):
 * a new Ingress that names no class (spec.ingressClassName, or the kubernetes.io/ingress.class
 * annotation) gets the IngressClass annotated ingressclass.kubernetes.io/is-default-class=true;
 * none: nothing; several: 403 `N default IngressClasses were found, only 1 allowed`. Updates
 * are left alone.
 */
import { errors } from '../../util';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { ensureSpec, KEY_PREFIX, stringField, stringMap } from '../plugin-support';
import { type JsonObject, metadataOf } from '../../apis/object';

export const defaultIngressClassPlugin: AdmissionPluginFactory = (_config, deps) => ({
  name: 'DefaultIngressClass',
  sideEffects: 'None',
  handles: (a) => a.group === 'networking.k8s.io' && a.resource === 'ingresses' && a.subresource === '' && a.operation === 'CREATE' && a.object !== undefined,
  async mutate(a) {
    const ingress = a.object as JsonObject;
    const spec = ensureSpec(ingress);
    if (typeof spec.ingressClassName === 'string' || 'kubernetes.io/ingress.class' in stringMap(metadataOf(ingress), 'annotations')) return ingress;
    const defaults = deps.objects.list(KEY_PREFIX.ingressclasses).filter((c) => stringMap(metadataOf(c), 'annotations')['ingressclass.kubernetes.io/is-default-class'] === 'true');
    if (defaults.length === 0) return ingress;
    if (defaults.length > 1) {
      throw errors.forbidden({ group: 'networking.k8s.io', resource: 'ingresses' }, '', `${defaults.length} default IngressClasses were found, only 1 allowed`);
    }
    spec.ingressClassName = stringField(metadataOf(defaults[0]), 'name');
    return ingress;
  },
});
