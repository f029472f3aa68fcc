/**
 * A sequential model of Kubernetes API operations on single objects, for the store's
 * linearizability checker: create (409 when it exists), update with a resourceVersion
 * precondition (409 when it differs, 404 when absent), delete (404 when absent) and get.
 * The state is one object: its value and resourceVersion, or null when absent; the checker
 * splits a history by object name, so objects never constrain each other.
 *
 * The resourceVersion written by an operation whose answer was lost is the one the store's
 * history gives it (appliedResourceVersion); where none is known, the model keeps it unknown (any
 * precondition may match it, either way, and any read of the value accepts it). That keeps the
 * check sound: it never reports a violation an actual execution could have produced.
 */
import type { Model, Operation } from '../../raft';
import type { ApiInput, ApiOperation, ApiOutput } from './chaos-history';

export interface ApiObjectState {
  value: string;
  /** null: written by an operation whose answer was lost. */
  resourceVersion: string | null;
}

type State = ApiObjectState | null;

function preconditionMayMatch(state: ApiObjectState, expected: string): boolean {
  return state.resourceVersion === null || state.resourceVersion === expected;
}

function preconditionMayFail(state: ApiObjectState, expected: string): boolean {
  return state.resourceVersion === null || state.resourceVersion !== expected;
}

export function apiObjectModel(): Model<State, ApiInput, ApiOutput> {
  return {
    init: () => null,

    step(state, input, output) {
      const reject = { ok: false, next: state };
      switch (input.op) {
        case 'create':
          if (output.status === 'ok') return state === null ? { ok: true, next: { value: input.value, resourceVersion: output.resourceVersion ?? null } } : reject;
          if (output.status === 'conflict') return { ok: state !== null, next: state };
          return reject;
        case 'update':
          if (output.status === 'ok') {
            return state !== null && preconditionMayMatch(state, input.expectedResourceVersion)
              ? { ok: true, next: { value: input.value, resourceVersion: output.resourceVersion ?? null } }
              : reject;
          }
          if (output.status === 'conflict') return { ok: state !== null && preconditionMayFail(state, input.expectedResourceVersion), next: state };
          return { ok: state === null, next: state };
        case 'delete':
          if (output.status === 'ok') return { ok: state !== null, next: null };
          if (output.status === 'not-found') return { ok: state === null, next: state };
          return reject;
        case 'get':
          if (output.status === 'not-found') return { ok: state === null, next: state };
          if (output.status !== 'ok' || state === null || state.value !== output.value) return reject;
          if (state.resourceVersion !== null && state.resourceVersion !== output.resourceVersion) return reject;
          return { ok: true, next: state };
      }
    },

    stepIndefinite(state, input) {
      switch (input.op) {
        case 'create':
          return state === null ? { value: input.value, resourceVersion: input.appliedResourceVersion ?? null } : state;
        case 'update':
          return state !== null && preconditionMayMatch(state, input.expectedResourceVersion) ? { value: input.value, resourceVersion: input.appliedResourceVersion ?? null } : state;
        case 'delete':
          return null;
        case 'get':
          return state;
      }
    },

    // Reads and refusals change nothing wherever they are accepted.
    isReadOnly: (input, output) => input.op === 'get' || output.status !== 'ok',

    key: (state) => (state === null ? '-' : `${state.resourceVersion ?? '?'}:${state.value}`),

    partition(history) {
      const byName = new Map<string, Operation<ApiInput, ApiOutput>[]>();
      for (const op of history) {
        const part = byName.get(op.input.name) ?? [];
        part.push(op);
        byName.set(op.input.name, part);
      }
      return [...byName.values()];
    },

    describe(input, output) {
      const call = input.op === 'update' ? `update ${input.name}=${input.value} if rv=${input.expectedResourceVersion}` : input.op === 'create' ? `create ${input.name}=${input.value}` : `${input.op} ${input.name}`;
      if (output === undefined) return `${call} -> ?`;
      if (output.status !== 'ok') return `${call} -> ${output.status}`;
      return `${call} -> ok${output.value !== undefined ? ` ${output.value}` : ''}${output.resourceVersion !== undefined ? ` rv=${output.resourceVersion}` : ''}`;
    },

    describeState: (state) => (state === null ? 'absent' : `${state.value} rv=${state.resourceVersion ?? '?'}`),
  };
}

/** The operations in the checker's shape (the recorder's are already; this narrows the type). */
export function asCheckerHistory(history: readonly ApiOperation[]): Operation<ApiInput, ApiOutput>[] {
  return history.map((op) => ({ clientId: op.clientId, input: op.input, call: op.call, return: op.return, output: op.output }));
}
