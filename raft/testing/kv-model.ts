/**
 * A sequential model of an etcd-like key-value store for the linearizability checker: put, get,
 * delete and compare-and-swap on string keys holding string values, as a client sees them.
 *
 * Operations on different keys never constrain each other, so the model partitions a history by
 * key and its state is a single register: the key's value, or null when absent. That state is
 * only meaningful within one key's part; the checker always partitions through partition().
 *
 * What callers must do: leave out operations that failed with a definite error (the client knows
 * they did not happen); record those with an unknown outcome (timeout, lost connection) with
 * return = Infinity and no output. Revisions in put outputs are not checked.
 */
import type { Model, Operation } from './linearizability';

export type KvInput =
  | { op: 'put'; key: string; value: string }
  | { op: 'get'; key: string }
  | { op: 'delete'; key: string }
  /** Sets value only if the key currently holds expected (null: only if the key is absent). */
  | { op: 'cas'; key: string; expected: string | null; value: string };

export interface KvPutOutput {
  ok: true;
  revision?: number;
}
export interface KvGetOutput {
  ok: true;
  /** null: the key was absent. */
  value: string | null;
}
export interface KvDeleteOutput {
  ok: true;
  /** How many keys were deleted: 0 or 1. */
  deleted: number;
}
export interface KvCasOutput {
  ok: true;
  succeeded: boolean;
}
export type KvOutput = KvPutOutput | KvGetOutput | KvDeleteOutput | KvCasOutput;

/** The value of the one key of a part, or null when it is absent. */
export type KvState = string | null;

export type KvOperation = Operation<KvInput, KvOutput>;

/** The model; pass it to checkLinearizable with a history of KvInput/KvOutput operations. */
export function kvModel(): Model<KvState, KvInput, KvOutput> {
  return {
    init: () => null,

    step(state, input, output) {
      switch (input.op) {
        case 'put':
          return { ok: true, next: input.value };
        case 'get': {
          const value = outputField(input, output, 'value') as string | null;
          return { ok: value === state, next: state };
        }
        case 'delete': {
          const deleted = outputField(input, output, 'deleted') as number;
          return { ok: deleted === (state === null ? 0 : 1), next: null };
        }
        case 'cas': {
          const succeeded = outputField(input, output, 'succeeded') as boolean;
          const matches = state === input.expected;
          return { ok: succeeded === matches, next: matches ? input.value : state };
        }
      }
    },

    stepIndefinite(state, input) {
      switch (input.op) {
        case 'put':
          return input.value;
        case 'get':
          return state;
        case 'delete':
          return null;
        case 'cas':
          return state === input.expected ? input.value : state;
      }
    },

    // Wherever these are accepted they leave the value alone: a get; a delete that found nothing
    // (accepted only when absent); a CAS that failed; a CAS that succeeded writing what it expected.
    isReadOnly(input, output) {
      switch (input.op) {
        case 'put':
          return false;
        case 'get':
          return true;
        case 'delete':
          return (output as KvDeleteOutput).deleted === 0;
        case 'cas':
          return !(output as KvCasOutput).succeeded || input.expected === input.value;
      }
    },

    // A prefix tells absent apart from every string value, the empty string included.
    key: (state) => (state === null ? '-' : `+${state}`),

    partition(history) {
      const byKey = new Map<string, KvOperation[]>();
      for (const op of history) {
        let part = byKey.get(op.input.key);
        if (part === undefined) {
          part = [];
          byKey.set(op.input.key, part);
        }
        part.push(op);
      }
      return [...byKey.values()];
    },

    describe(input, output) {
      const call = describeInput(input);
      if (output === undefined) return `${call} -> ? (no answer)`;
      return `${call} -> ${describeOutput(input, output)}`;
    },

    describeState: (state) => (state === null ? 'absent' : JSON.stringify(state)),
  };
}

/**
 * Reads the field an output of this kind of operation must carry. An output of the wrong shape is
 * a bug in the code that recorded the history, not a linearizability violation, so it throws.
 */
function outputField(input: KvInput, output: KvOutput, field: 'value' | 'deleted' | 'succeeded'): unknown {
  if (typeof output !== 'object' || output === null || !(field in output)) {
    throw new TypeError(`${input.op} on ${JSON.stringify(input.key)} recorded an output without '${field}': ${JSON.stringify(output)}`);
  }
  return (output as unknown as Record<string, unknown>)[field];
}

function describeInput(input: KvInput): string {
  const key = JSON.stringify(input.key);
  switch (input.op) {
    case 'put':
      return `put(${key}, ${JSON.stringify(input.value)})`;
    case 'get':
      return `get(${key})`;
    case 'delete':
      return `delete(${key})`;
    case 'cas':
      return `cas(${key}, ${input.expected === null ? 'absent' : JSON.stringify(input.expected)} -> ${JSON.stringify(input.value)})`;
  }
}

function describeOutput(input: KvInput, output: KvOutput): string {
  switch (input.op) {
    case 'put':
      return 'ok';
    case 'get': {
      const value = (output as KvGetOutput).value;
      return value === null ? 'absent' : JSON.stringify(value);
    }
    case 'delete':
      return `deleted ${(output as KvDeleteOutput).deleted}`;
    case 'cas':
      return (output as KvCasOutput).succeeded ? 'succeeded' : 'failed';
  }
}
