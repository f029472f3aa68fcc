import { expect } from 'chai';
import {
  applyStrategicMergePatch, GENERIC_UNPROCESSABLE_MESSAGE, PatchError, PatchSchema,
} from '../../../../src/patch';
import { deepCopy, type JsonObject, type JsonValue } from '../../../../src/apis/object';

const schema = PatchSchema.load();
const deploymentSchema = schema.forKind('apps/v1', 'Deployment');
const podSchema = schema.forKind('v1', 'Pod');

/** A Deployment as the server stores it: defaults filled in, two containers. */
function liveDeployment(): JsonObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', labels: { app: 'web', tier: 'frontend' }, resourceVersion: '42' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'app', image: 'nginx:1.24', imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log',
              env: [{ name: 'MODE', value: 'prod' }],
              ports: [{ containerPort: 80, protocol: 'TCP' }],
            },
            { name: 'sidecar', image: 'busybox:1.36', args: ['sleep', 'infinity'] },
          ],
          volumes: [{ name: 'cache', emptyDir: {} }],
          restartPolicy: 'Always',
        },
      },
    },
  };
}

function spec(object: JsonValue): JsonObject {
  return (object as { spec: JsonObject }).spec;
}

function podSpec(object: JsonValue): JsonObject {
  return ((spec(object).template as JsonObject).spec as JsonObject);
}

function caught(fn: () => unknown): PatchError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(PatchError);
    return err as PatchError;
  }
  throw new Error('expected a PatchError');
}

describe('src/patch PatchSchema', () => {
  it('finds the merge rules of built-in kinds from the OpenAPI v3 documents', () => {
    expect(deploymentSchema).to.not.equal(undefined);
    const template = deploymentSchema!.lookupForStruct('spec').schema!.lookupForStruct('template').schema!;
    const containers = template.lookupForStruct('spec').schema!.lookupForSlice('containers');
    // k8s.io/api core/v1 types.go: Containers []Container `patchStrategy:"merge" patchMergeKey:"name"`.
    expect(containers.meta).to.deep.equal({ strategies: ['merge'], mergeKey: 'name' });
    expect(containers.schema!.lookupForSlice('ports').meta).to.deep.equal({ strategies: ['merge'], mergeKey: 'containerPort' });
    // PodSpec.Volumes `patchStrategy:"merge,retainKeys" patchMergeKey:"name"`; DeploymentSpec.Strategy `patchStrategy:"retainKeys"`.
    expect(podSchema!.lookupForStruct('spec').schema!.lookupForSlice('volumes').meta).to.deep.equal({ strategies: ['merge', 'retainKeys'], mergeKey: 'name' });
    expect(deploymentSchema!.lookupForStruct('spec').schema!.lookupForStruct('strategy').meta.strategies).to.deep.equal(['retainKeys']);
    // Tolerations carry no patch strategy, so they are replaced as a whole.
    expect(podSchema!.lookupForStruct('spec').schema!.lookupForSlice('tolerations').meta).to.deep.equal({ strategies: [], mergeKey: '' });
  });

  it('returns the same node for a kind twice, and nothing for unknown kinds or custom resources', () => {
    expect(schema.forKind('apps/v1', 'Deployment')).to.equal(deploymentSchema);
    expect(schema.forKind('example.com/v1', 'Widget')).to.equal(undefined);
    expect(schema.forKind('apps/v1', 'NoSuchKind')).to.equal(undefined);
  });

  it('gives map-valued fields the value schema for any key', () => {
    const labels = podSchema!.lookupForStruct('metadata').schema!.lookupForStruct('labels').schema!;
    expect(labels.lookupForStruct('anything').meta).to.deep.equal({ strategies: [], mergeKey: '' });
    expect(labels.lookupForStruct('anything').schema).to.not.equal(undefined);
  });
});

describe('src/patch applyStrategicMergePatch', () => {
  it('applies the client-side kubectl apply patch that changes one image and adds an env var', () => {
    // The shape kubectl apply sends (CreateThreeWayMergePatch with SetElementOrder): $setElementOrder for each merged list.
    const patch = {
      metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' } },
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'app' }, { name: 'sidecar' }],
            containers: [{
              '$setElementOrder/env': [{ name: 'MODE' }, { name: 'LOG_LEVEL' }],
              env: [{ name: 'LOG_LEVEL', value: 'debug' }],
              image: 'nginx:1.25',
              name: 'app',
            }],
          },
        },
      },
    };
    const live = liveDeployment();
    const result = applyStrategicMergePatch(live, patch, deploymentSchema);
    const containers = podSpec(result).containers as JsonObject[];
    expect(containers).to.deep.equal([
      {
        name: 'app', image: 'nginx:1.25', imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log',
        env: [{ name: 'MODE', value: 'prod' }, { name: 'LOG_LEVEL', value: 'debug' }],
        ports: [{ containerPort: 80, protocol: 'TCP' }],
      },
      { name: 'sidecar', image: 'busybox:1.36', args: ['sleep', 'infinity'] },
    ]);
    expect((result as JsonObject & { metadata: JsonObject }).metadata.annotations).to.deep.equal({
      'kubectl.kubernetes.io/last-applied-configuration': '{}',
    });
    expect(live).to.deep.equal(liveDeployment(), 'inputs are not modified');
  });

  it('removes a label with null and leaves the others', () => {
    const result = applyStrategicMergePatch(liveDeployment(), { metadata: { labels: { tier: null } } }, deploymentSchema) as JsonObject;
    expect((result.metadata as JsonObject).labels).to.deep.equal({ app: 'web' });
  });

  it('drops nulls from a value added where the original had nothing (kubernetes PR 107705, v1.24+)', () => {
    const result = applyStrategicMergePatch({ metadata: { name: 'p' } }, { metadata: { annotations: { a: '1', b: null } } }, podSchema) as JsonObject;
    expect((result.metadata as JsonObject).annotations).to.deep.equal({ a: '1' });
  });

  it('applies kubectl label / annotate / scale style patches', () => {
    const labelled = applyStrategicMergePatch(liveDeployment(), { metadata: { labels: { env: 'prod' } } }, deploymentSchema) as JsonObject;
    expect((labelled.metadata as JsonObject).labels).to.deep.equal({ app: 'web', tier: 'frontend', env: 'prod' });
    const annotated = applyStrategicMergePatch(liveDeployment(), { metadata: { annotations: { note: 'hi' } } }, deploymentSchema) as JsonObject;
    expect((annotated.metadata as JsonObject).annotations).to.deep.equal({ note: 'hi' });
    const scaled = applyStrategicMergePatch(liveDeployment(), { spec: { replicas: 5 } }, deploymentSchema);
    expect(spec(scaled).replicas).to.equal(5);
    expect(spec(scaled).strategy).to.deep.equal(spec(liveDeployment()).strategy);
  });

  it('orders a list as $setElementOrder says, keeping server-only items near their old neighbours', () => {
    const live = liveDeployment();
    podSpec(live).containers = [{ name: 'a', image: 'a' }, { name: 'x', image: 'x' }, { name: 'b', image: 'b' }];
    const reordered = applyStrategicMergePatch(live, {
      spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }] } } },
    }, deploymentSchema);
    // strategicpatch normalizeElementOrder/mergeSortedSlice: x (server only) is placed before b because x precedes b in the live list.
    expect((podSpec(reordered).containers as JsonObject[]).map((c) => c.name)).to.deep.equal(['x', 'b', 'a']);

    const swapped = applyStrategicMergePatch(liveDeployment(), {
      spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'app' }] } } },
    }, deploymentSchema);
    expect((podSpec(swapped).containers as JsonObject[]).map((c) => c.name)).to.deep.equal(['sidecar', 'app']);
  });

  it('refuses a patch list that contradicts $setElementOrder', () => {
    const err = caught(() => applyStrategicMergePatch(liveDeployment(), {
      spec: { template: { spec: {
        '$setElementOrder/containers': [{ name: 'app' }, { name: 'sidecar' }],
        containers: [{ name: 'sidecar', image: 's' }, { name: 'app', image: 'a' }],
      } } },
    }, deploymentSchema));
    expect(err.code).to.equal(500);
    expect(err.message).to.match(/^The order in patch list:\n/);
  });

  it('puts new merge-list items before the existing ones, as v1.25 does without $setElementOrder', () => {
    // mergeSlice -> normalizeElementOrder: an item absent from the live list is never "less" than a live one.
    const result = applyStrategicMergePatch(liveDeployment(), {
      spec: { template: { spec: { containers: [{ name: 'debug', image: 'busybox' }] } } },
    }, deploymentSchema);
    expect((podSpec(result).containers as JsonObject[]).map((c) => c.name)).to.deep.equal(['debug', 'app', 'sidecar']);
  });

  it('switches the Deployment strategy to Recreate with $retainKeys', () => {
    // What kubectl apply sends for a retainKeys field: the directive plus a null for the dropped member.
    const result = applyStrategicMergePatch(liveDeployment(), {
      spec: { strategy: { $retainKeys: ['type'], rollingUpdate: null, type: 'Recreate' } },
    }, deploymentSchema);
    expect(spec(result).strategy).to.deep.equal({ type: 'Recreate' });
    // Even without the null, $retainKeys clears the members it does not list.
    const clearing = applyStrategicMergePatch(liveDeployment(), { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } }, deploymentSchema);
    expect(spec(clearing).strategy).to.deep.equal({ type: 'Recreate' });
  });

  it('refuses a $retainKeys list that does not name a patched member with 400', () => {
    const err = caught(() => applyStrategicMergePatch(liveDeployment(), {
      spec: { strategy: { $retainKeys: ['type'], type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } },
    }, deploymentSchema));
    // mergepatch.ErrBadPatchFormatForRetainKeys, mapped to BadRequest by patch.go interpretStrategicMergePatchError.
    expect(err.toStatus()).to.deep.equal({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'invalid patch format of retainKeys', reason: 'BadRequest', code: 400,
    });
  });

  it('switches a volume source with a per-item $retainKeys', () => {
    const result = applyStrategicMergePatch(liveDeployment(), {
      spec: { template: { spec: { volumes: [{ $retainKeys: ['configMap', 'name'], name: 'cache', configMap: { name: 'cfg' } }] } } },
    }, deploymentSchema);
    expect(podSpec(result).volumes).to.deep.equal([{ name: 'cache', configMap: { name: 'cfg' } }]);
  });

  it('deletes one list item with $patch: delete', () => {
    const result = applyStrategicMergePatch(liveDeployment(), {
      spec: { template: { spec: { containers: [{ name: 'sidecar', $patch: 'delete' }] } } },
    }, deploymentSchema);
    expect((podSpec(result).containers as JsonObject[]).map((c) => c.name)).to.deep.equal(['app']);
  });

  it('replaces a merge list with a $patch: replace item, and a map with $patch: replace', () => {
    const list = applyStrategicMergePatch(liveDeployment(), {
      spec: { template: { spec: { containers: [{ name: 'only', image: 'x' }, { $patch: 'replace' }] } } },
    }, deploymentSchema);
    expect(podSpec(list).containers).to.deep.equal([{ name: 'only', image: 'x' }]);
    const map = applyStrategicMergePatch(liveDeployment(), {
      metadata: { labels: { $patch: 'replace', fresh: 'yes' } },
    }, deploymentSchema) as JsonObject;
    expect((map.metadata as JsonObject).labels).to.deep.equal({ fresh: 'yes' });
    const deleted = applyStrategicMergePatch(liveDeployment(), { metadata: { labels: { $patch: 'delete' } } }, deploymentSchema) as JsonObject;
    expect((deleted.metadata as JsonObject).labels).to.deep.equal({});
  });

  it('refuses $patch: merge as kube does: untyped 500s', () => {
    // strategicpatch: "merging lists cannot yet be specified in the patch"; in a map, ErrBadPatchType.
    const inList = caught(() => applyStrategicMergePatch(liveDeployment(), {
      spec: { template: { spec: { containers: [{ name: 'app', $patch: 'merge' }] } } },
    }, deploymentSchema));
    expect(inList.toStatus()).to.deep.equal({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'merging lists cannot yet be specified in the patch', code: 500,
    });
    const inMap = caught(() => applyStrategicMergePatch(liveDeployment(), { metadata: { labels: { $patch: 'merge', b: 'c' } } }, deploymentSchema));
    expect(inMap.message).to.equal('unknown patch type: merge in map: map[$patch:merge b:c]');
  });

  it('prints a $patch value that is not a string with fmt\'s %s, element by element', () => {
    // mergepatch.ErrBadPatchType formats the value with %s: fmt applies it to a map's keys and values.
    const map = caught(() => applyStrategicMergePatch(liveDeployment(), { spec: { $patch: { a: 'b', n: 1 } } }, deploymentSchema));
    expect(map.message).to.equal('unknown patch type: map[a:b n:%!s(int64=1)] in map: map[$patch:map[a:b n:1]]');
    const list = caught(() => applyStrategicMergePatch(liveDeployment(), { spec: { $patch: ['x', true] } }, deploymentSchema));
    expect(list.message).to.equal('unknown patch type: [x %!s(bool=true)] in map: map[$patch:[x true]]');
  });

  it('merges ports by containerPort and env by name', () => {
    const result = applyStrategicMergePatch(liveDeployment(), {
      spec: { template: { spec: { containers: [{ name: 'app', ports: [{ containerPort: 80, name: 'http' }, { containerPort: 443 }] }] } } },
    }, deploymentSchema);
    const app = (podSpec(result).containers as JsonObject[])[0] as JsonObject;
    // Items named by the patch keep the patch's order.
    expect(app.ports).to.deep.equal([{ containerPort: 80, protocol: 'TCP', name: 'http' }, { containerPort: 443 }]);
    expect(app.env).to.deep.equal([{ name: 'MODE', value: 'prod' }]);
  });

  it('replaces lists without a patch strategy (args, tolerations)', () => {
    const result = applyStrategicMergePatch(liveDeployment(), {
      spec: { template: { spec: {
        containers: [{ name: 'sidecar', args: ['sleep', '10'] }],
        tolerations: [{ key: 'k', operator: 'Exists' }],
      } } },
    }, deploymentSchema);
    const sidecar = (podSpec(result).containers as JsonObject[]).find((c) => c.name === 'sidecar') as JsonObject;
    expect(sidecar.args).to.deep.equal(['sleep', '10']);
    const again = applyStrategicMergePatch(result, { spec: { template: { spec: { tolerations: [{ key: 'other', operator: 'Exists' }] } } } }, deploymentSchema);
    expect(podSpec(again).tolerations).to.deep.equal([{ key: 'other', operator: 'Exists' }]);
  });

  it('unions merge lists of scalars and deletes from them with $deleteFromPrimitiveList', () => {
    const pod = { metadata: { name: 'p', finalizers: ['a.example/x', 'b.example/y'] } };
    const added = applyStrategicMergePatch(pod, { metadata: { finalizers: ['c.example/z', 'a.example/x'] } }, podSchema) as JsonObject;
    expect((added.metadata as JsonObject).finalizers).to.deep.equal(['c.example/z', 'a.example/x', 'b.example/y']);
    const removed = applyStrategicMergePatch(pod, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a.example/x'] } }, podSchema) as JsonObject;
    expect((removed.metadata as JsonObject).finalizers).to.deep.equal(['b.example/y']);
    // A deletion list for a list the object does not have creates nothing.
    const none = applyStrategicMergePatch({ metadata: { name: 'p' } }, { metadata: { '$deleteFromPrimitiveList/finalizers': ['x'] } }, podSchema) as JsonObject;
    expect(none.metadata).to.deep.equal({ name: 'p' });
  });

  it('refuses a malformed $deleteFromPrimitiveList key with 400', () => {
    const err = caught(() => applyStrategicMergePatch({ metadata: {} }, { metadata: { $deleteFromPrimitiveList: ['x'] } }, podSchema));
    expect(err.code).to.equal(400);
    expect(err.message).to.equal('invalid patch format of primitive list');
  });

  it('answers a list of lists in a merge list with the generic 422', () => {
    // patch.go maps mergepatch.ErrNoListOfLists to NewGenericServerResponse(422, ...).
    const err = caught(() => applyStrategicMergePatch({ metadata: { finalizers: [] } }, { metadata: { finalizers: [['x']] } }, podSchema));
    expect(err.code).to.equal(422);
    expect(err.message).to.equal(GENERIC_UNPROCESSABLE_MESSAGE);
    expect(err.detail).to.equal('lists of lists are not supported');
  });

  it('refuses a merge-list item without its merge key (untyped 500)', () => {
    const err = caught(() => applyStrategicMergePatch(liveDeployment(), {
      spec: { template: { spec: { containers: [{ image: 'x' }] } } },
    }, deploymentSchema));
    expect(err.code).to.equal(500);
    expect(err.message).to.equal('map: map[image:x] does not contain declared merge key: name');
  });

  it('refuses a patch that is not a JSON object with 400, and treats null as no change', () => {
    // patch.go strategicPatchObject: the body is decoded into map[string]interface{}; failures are BadRequest with the decoder text.
    for (const [patch, kind] of [[[1], 'array'], ['x', 'string'], [3, 'number'], [true, 'bool']] as const) {
      const err = caught(() => applyStrategicMergePatch(liveDeployment(), patch, deploymentSchema));
      expect(err.toStatus()).to.deep.equal({
        kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
        message: `json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`, reason: 'BadRequest', code: 400,
      });
    }
    expect(applyStrategicMergePatch(liveDeployment(), null, deploymentSchema)).to.deep.equal(liveDeployment());
  });

  it('without a schema merges maps and replaces every list', () => {
    const doc = { spec: { items: [{ name: 'a', v: 1 }], conf: { a: 1, b: 2 } } };
    const result = applyStrategicMergePatch(doc, { spec: { items: [{ name: 'b' }], conf: { b: null, c: 3 } } }, undefined);
    expect(result).to.deep.equal({ spec: { items: [{ name: 'b' }], conf: { a: 1, c: 3 } } });
  });

  it('takes a value of another JSON type whole', () => {
    const result = applyStrategicMergePatch(liveDeployment(), { spec: { replicas: 'three', selector: [1] } }, deploymentSchema);
    expect(spec(result).replicas).to.equal('three');
    expect(spec(result).selector).to.deep.equal([1]);
  });

  it('does not modify the patch or share structure with it', () => {
    const patch = { spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'app' }], containers: [{ name: 'app', image: 'x' }] } } } };
    const before = deepCopy(patch);
    const result = applyStrategicMergePatch(liveDeployment(), patch, deploymentSchema);
    expect(patch).to.deep.equal(before);
    ((podSpec(result).containers as JsonObject[])[0] as JsonObject).image = 'changed';
    expect(patch.spec.template.spec.containers[0]!.image).to.equal('x');
  });
});
