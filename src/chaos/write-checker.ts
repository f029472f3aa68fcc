/**
 * No acknowledged write lost, no failed write present: every create or update the API
 * acknowledged is in the store's history at the resourceVersion it returned, with its value;
 * the value of a write that failed definitely (409, 404) appears nowhere in that history; and
 * every value the store holds was written by some client (nothing invented). Values are unique
 * per write, which is what makes a value name a write.
 */
import type { ApiOperation, StoreChange, Violation } from './chaos-history';

export function checkWrites(history: readonly ApiOperation[], truth: readonly StoreChange[]): Violation[] {
  const violations: Violation[] = [];
  const byRevision = new Map<number, StoreChange[]>();
  const storedValues = new Map<string, StoreChange>();
  for (const change of truth) {
    const list = byRevision.get(change.revision) ?? [];
    list.push(change);
    byRevision.set(change.revision, list);
    if (change.value !== null) storedValues.set(change.value, change);
  }
  const attempted = new Set<string>();
  for (const op of history) {
    const { input, output } = op;
    if (input.op !== 'create' && input.op !== 'update') continue;
    attempted.add(input.value);
    if (output === undefined) continue;
    if (output.status === 'ok') {
      const revision = Number(output.resourceVersion);
      const atRevision = byRevision.get(revision) ?? [];
      if (!atRevision.some((c) => c.name === input.name && c.value === input.value)) {
        const stored = storedValues.get(input.value);
        violations.push({
          checker: 'writes',
          message: `acknowledged ${input.op} of ${input.name}=${input.value} (client ${op.clientId}, returned at ${op.return.toFixed(0)} ms with resourceVersion ${output.resourceVersion ?? '?'}) ` +
            (stored === undefined ? 'is not in the store\'s history' : `is in the store at revision ${stored.revision}, not ${revision}`),
        });
      }
    } else {
      const stored = storedValues.get(input.value);
      if (stored !== undefined) {
        violations.push({
          checker: 'writes',
          message: `${input.op} of ${input.name}=${input.value} failed with ${output.status} (client ${op.clientId}) but the store holds that value at revision ${stored.revision}`,
        });
      }
    }
  }
  for (const change of truth) {
    if (change.value !== null && !attempted.has(change.value)) {
      violations.push({ checker: 'writes', message: `the store holds ${change.name}=${change.value} at revision ${change.revision}, which no client wrote` });
    }
  }
  return violations;
}
