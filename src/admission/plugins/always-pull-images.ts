/**
 * AlwaysPullImages (off by default; kubernetes plugin/pkg/admission/alwayspullimages): every
 * container of a new pod, or of an updated pod that brings a new image, gets imagePullPolicy
 * Always, so a node's cached image cannot be used without the pull credentials; validation
 * refuses such a pod whose policy a later plugin changed back.
 */
import type { AdmissionAttributes } from '../admission-chain';
import type { AdmissionPluginFactory } from '../plugin-registry';
import { admissionForbidden, ensureSpec, objectField, stringField } from '../plugin-support';
import { visitContainers } from '../pod-spec';
import type { JsonObject } from '../../apis/object';

function images(pod: JsonObject | undefined): Set<string> {
  const found = new Set<string>();
  visitContainers(objectField(pod, 'spec'), (c) => found.add(stringField(c, 'image')));
  return found;
}

function applies(a: AdmissionAttributes): boolean {
  if (a.group !== '' || a.resource !== 'pods' || a.subresource !== '' || a.object === undefined) return false;
  if (a.operation === 'CREATE') return true;
  if (a.operation !== 'UPDATE') return false;
  // An update that brings no new image is left alone.
  const old = images(a.oldObject);
  return [...images(a.object)].some((image) => !old.has(image));
}

export const alwaysPullImagesPlugin: AdmissionPluginFactory = () => ({
  name: 'AlwaysPullImages',
  sideEffects: 'None',
  handles: applies,
  async mutate(a) {
    const pod = a.object as JsonObject;
    visitContainers(ensureSpec(pod), (c) => {
      c.imagePullPolicy = 'Always';
    });
    return pod;
  },
  async validate(a) {
    visitContainers(objectField(a.object, 'spec'), (c, kind, index) => {
      const policy = stringField(c, 'imagePullPolicy');
      if (policy !== 'Always') throw admissionForbidden(a, `spec.${kind}[${index}].imagePullPolicy: Unsupported value: "${policy}": supported values: "Always"`);
    });
  },
});
