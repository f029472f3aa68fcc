/**
 * Linearizability of the API history, object by object, with the store's checker and the model
 * of API operations on single objects.
 */
import { checkLinearizable } from '../../raft';
import { apiObjectModel, asCheckerHistory } from './api-object-model';
import type { ApiOperation, Violation } from './chaos-history';

export interface LinearizabilityOutcome {
  violations: Violation[];
  /** The checker gave up before deciding (not a violation; reported apart). */
  timedOut: boolean;
  objects: number;
  elapsedMs: number;
}

export function checkObjectLinearizability(history: readonly ApiOperation[], timeoutMs = 60_000): LinearizabilityOutcome {
  const result = checkLinearizable(apiObjectModel(), asCheckerHistory(history), { timeoutMs });
  const violations: Violation[] = result.violation === undefined ? [] : [{ checker: 'linearizability', message: result.violation.explanation }];
  return { violations, timedOut: result.timedOut, objects: result.stats.partitions, elapsedMs: result.stats.elapsedMs };
}
