/**
 * flowcontrol.apiserver.k8s.io FlowSchema and PriorityLevelConfiguration: v1.25 serves v1beta1 and
 * v1beta2 and stores v1beta2. The two versions' v1.25 OpenAPI schemas are identical field for field
 * (v1beta3, which renames assuredConcurrencyShares, only arrives in v1.26), and kube's conversions
 * are the generated field copies, so only apiVersion changes.
 */
import { ConversionFamily } from './conversion-family';
import { sameShapeConversion } from './same-shape-conversion';

const HUB = 'flowcontrol.apiserver.k8s.io/v1beta2';
const OTHERS = ['flowcontrol.apiserver.k8s.io/v1beta1'];

export const flowControlConversions: readonly ConversionFamily[] = [
  sameShapeConversion('FlowSchema', HUB, OTHERS),
  sameShapeConversion('PriorityLevelConfiguration', HUB, OTHERS),
];
