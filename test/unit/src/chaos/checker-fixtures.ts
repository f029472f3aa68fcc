/** Small builders for hand-made histories in the chaos checkers' tests. */
import type { ApiInput, ApiOperation, ApiOutput, StoreChange } from '../../../../src/chaos/chaos-history';

export function op(clientId: number, input: ApiInput, call: number, ret: number | 'lost', output?: ApiOutput): ApiOperation {
  return { clientId, input, call, return: ret === 'lost' ? Infinity : ret, output: ret === 'lost' ? undefined : output, detail: 'test' };
}

export const ok = (value?: string, resourceVersion?: number): ApiOutput => ({ status: 'ok', value, resourceVersion: resourceVersion === undefined ? undefined : String(resourceVersion) });
export const conflict: ApiOutput = { status: 'conflict' };
export const notFound: ApiOutput = { status: 'not-found' };

export function change(revision: number, name: string, value: string | null): StoreChange {
  return { revision, name, value };
}
