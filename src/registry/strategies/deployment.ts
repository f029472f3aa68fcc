/** Deployments (pkg/registry/apps/deployment/strategy.go): annotations are part of the generation. */
import { childObject, semanticallyEqual } from '../../apis/defaulting';
import { emptyStatus, workload, type KindRules } from './kind-rules';

export const deploymentRules: KindRules = workload(emptyStatus, {
  // Annotations are copied to the replica sets, so changing them is a new generation too.
  otherGenerationChange: (deployment, old) =>
    !semanticallyEqual(childObject(deployment, 'metadata')?.annotations, childObject(old, 'metadata')?.annotations),
});
