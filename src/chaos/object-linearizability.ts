/**
 * Linearizability of the API history, object by object, with the store's checker and the model
 * of API operations on single objects.
 *
 * Writes whose answer was lost are resolved first through the store's history (values are unique
 * per write): one whose value the store never held did not happen and is left out; one it holds
 * happened at that revision, which the model is told. Without this every lost write may go
 * anywhere after its call, with any version, and a few dozen of them on one object make the
 * search explode. The store's history itself is checked against the acknowledged writes by the
 * write checker, and across replicas by the recovery check's hashes.
 */
import { checkLinearizable } from '../../raft';
import { apiObjectModel, asCheckerHistory } from './api-object-model';
import type { ApiOperation, StoreChange, Violation } from './chaos-history';

export interface LinearizabilityOutcome {
  violations: Violation[];
  /** The checker gave up before deciding (not a violation; reported apart). */
  timedOut: boolean;
  objects: number;
  elapsedMs: number;
}

/** The history with lost writes resolved through the store's history (see the header). */
export function resolveLostWrites(history: readonly ApiOperation[], truth: readonly StoreChange[]): ApiOperation[] {
  const committed = new Map<string, StoreChange>();
  for (const change of truth) if (change.value !== null) committed.set(`${change.name}\u0000${change.value}`, change);
  const resolved: ApiOperation[] = [];
  for (const op of history) {
    const { input } = op;
    if (op.output !== undefined || (input.op !== 'create' && input.op !== 'update')) {
      resolved.push(op);
      continue;
    }
    const change = committed.get(`${input.name}\u0000${input.value}`);
    if (change !== undefined) resolved.push({ ...op, input: { ...input, appliedResourceVersion: String(change.revision) } });
  }
  return resolved;
}

export function checkObjectLinearizability(history: readonly ApiOperation[], truth: readonly StoreChange[], timeoutMs = 60_000): LinearizabilityOutcome {
  const result = checkLinearizable(apiObjectModel(), asCheckerHistory(resolveLostWrites(history, truth)), { timeoutMs });
  const violations: Violation[] = result.violation === undefined ? [] : [{ checker: 'linearizability', message: result.violation.explanation }];
  return { violations, timedOut: result.timedOut, objects: result.stats.partitions, elapsedMs: result.stats.elapsedMs };
}
