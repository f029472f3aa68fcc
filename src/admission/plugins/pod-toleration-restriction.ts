/**
 * PodTolerationRestriction (alpha, off by default; kubernetes
 * plugin/pkg/admission/podtolerationrestriction): a new pod gets its namespace's default
 * tolerations (annotation scheduler.alpha.kubernetes.io/defaultTolerations, a JSON list, else
 * the configuration's `default`), and any pod that is not BestEffort tolerates
 * node.kubernetes.io/memory-pressure:NoSchedule; then its tolerations must all be covered by the
 * namespace's whitelist (annotation scheduler.alpha.kubernetes.io/tolerationsWhitelist, else the
 * configuration's `whitelist`). Configuration: podtolerationrestriction.admission.k8s.io/v1alpha1
 * Configuration. The whitelist refusal is a plain error in v1.25, which kube-apiserver answers
 * with 500; so does this plugin.
 */
import { errors } from '../../util';
import type { AdmissionAttributes } from '../admission-chain';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { decodeConfig } from '../plugin-config';
import { ensureSpec, internalFailure, namespaceKey, objectField, stringMap } from '../plugin-support';
import { isBestEffort, mergeTolerations, tolerationsAllowed, tolerationsOf, type Toleration } from '../pod-spec';
import { type JsonObject, metadataOf } from '../../apis/object';

export const DEFAULT_TOLERATIONS_ANNOTATION = 'scheduler.alpha.kubernetes.io/defaultTolerations';
export const TOLERATIONS_WHITELIST_ANNOTATION = 'scheduler.alpha.kubernetes.io/tolerationsWhitelist';

function parseTolerations(text: string): Toleration[] {
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed)) throw new Error('json: cannot unmarshal into Go value of type []core.Toleration');
  return parsed as Toleration[];
}

export const podTolerationRestrictionPlugin: AdmissionPluginFactory = (config, deps) => {
  let clusterDefault: Toleration[] = [];
  let clusterWhitelist: Toleration[] = [];
  if (config !== undefined) {
    const decoded = decodeConfig(config, { group: 'podtolerationrestriction.admission.k8s.io', versions: ['v1alpha1'], kind: 'Configuration' });
    clusterDefault = Array.isArray(decoded.default) ? (decoded.default as Toleration[]) : [];
    clusterWhitelist = Array.isArray(decoded.whitelist) ? (decoded.whitelist as Toleration[]) : [];
  }

  /** The namespace's annotated tolerations, or undefined when it has none. */
  async function fromNamespace(a: AdmissionAttributes, annotation: string): Promise<Toleration[] | undefined> {
    const key = namespaceKey(a.namespace);
    const namespace = deps.objects.get(key) ?? (await deps.objects.getLive(key));
    if (namespace === undefined) throw errors.notFound({ group: '', resource: 'namespaces' }, a.namespace);
    const annotations = stringMap(metadataOf(namespace), 'annotations');
    if (!(annotation in annotations)) return undefined;
    try {
      return parseTolerations(annotations[annotation]);
    } catch (err) {
      throw internalFailure((err as Error).message);
    }
  }

  async function check(a: AdmissionAttributes, pod: JsonObject): Promise<void> {
    const tolerations = tolerationsOf(objectField(pod, 'spec'));
    if (tolerations.length === 0) return;
    let whitelist = await fromNamespace(a, TOLERATIONS_WHITELIST_ANNOTATION);
    let scope = 'namespace';
    if (whitelist === undefined) {
      whitelist = clusterWhitelist;
      scope = 'cluster';
    }
    if (whitelist.length > 0 && !tolerationsAllowed(tolerations, whitelist)) {
      throw internalFailure(`pod tolerations (possibly merged with namespace default tolerations) conflict with its ${scope} whitelist`);
    }
  }

  return {
    name: 'PodTolerationRestriction',
    sideEffects: 'None',
    handles: (a) => a.group === '' && a.resource === 'pods' && a.subresource === '' && (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.object !== undefined,
    async mutate(a) {
      const pod = a.object as JsonObject;
      let extra: Toleration[] = [];
      if (a.operation === 'CREATE') extra = (await fromNamespace(a, DEFAULT_TOLERATIONS_ANNOTATION)) ?? clusterDefault;
      if (!isBestEffort(pod)) extra = [...extra, { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' }];
      if (extra.length > 0) {
        const spec = ensureSpec(pod);
        spec.tolerations = mergeTolerations(tolerationsOf(spec), extra);
      }
      await check(a, pod);
      return pod;
    },
    async validate(a) {
      await check(a, a.object as JsonObject);
    },
  };
};
