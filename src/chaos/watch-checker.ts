/**
 * Every watch saw every change exactly once, in order, with no gap: within each segment of a
 * watch (from a list or resume revision, exclusive, through the last revision it was known
 * complete to, inclusive) the events received are exactly the store's changes of that range, in
 * revision order, each with the right type and value. A watch that got 410 and relisted starts a
 * new segment, so what it could not see across the relist is not asked of it.
 */
import type { ObservedEvent, StoreChange, Violation, WatchEventType, WatchRecord } from './chaos-history';

interface ExpectedEvent extends ObservedEvent {}

function expectedEvents(truth: readonly StoreChange[]): ExpectedEvent[] {
  const current = new Map<string, string>();
  const events: ExpectedEvent[] = [];
  for (const change of [...truth].sort((a, b) => a.revision - b.revision)) {
    const before = current.get(change.name);
    let type: WatchEventType;
    if (change.value === null) {
      type = 'DELETED';
      current.delete(change.name);
    } else {
      type = before === undefined ? 'ADDED' : 'MODIFIED';
      current.set(change.name, change.value);
    }
    events.push({ type, name: change.name, value: change.value === null ? before ?? null : change.value, resourceVersion: change.revision });
  }
  return events;
}

const show = (e: ObservedEvent): string => `${e.type} ${e.name}${e.value !== null ? `=${e.value}` : ''} rv=${e.resourceVersion}`;

export function checkWatches(records: readonly WatchRecord[], truth: readonly StoreChange[]): Violation[] {
  const violations: Violation[] = [];
  const all = expectedEvents(truth);
  for (const record of records) {
    for (const segment of record.segments) {
      const where = `watch ${record.watcherId} (segment from rv ${segment.from} through ${segment.through})`;
      const expected = all.filter((e) => e.resourceVersion > segment.from && e.resourceVersion <= segment.through);
      const seen = segment.events;
      for (let i = 1; i < seen.length; i++) {
        const previous = seen[i - 1].resourceVersion;
        const rv = seen[i].resourceVersion;
        if (rv === previous) violations.push({ checker: 'watch', message: `${where}: duplicate event ${show(seen[i])}` });
        else if (rv < previous) violations.push({ checker: 'watch', message: `${where}: out of order, ${show(seen[i])} after rv ${previous}` });
      }
      const seenRevisions = new Set(seen.map((e) => e.resourceVersion));
      const expectedRevisions = new Set(expected.map((e) => e.resourceVersion));
      for (const e of expected) {
        if (!seenRevisions.has(e.resourceVersion)) violations.push({ checker: 'watch', message: `${where}: gap, never saw ${show(e)}` });
      }
      for (const e of seen) {
        if (e.resourceVersion <= segment.from || e.resourceVersion > segment.through) {
          violations.push({ checker: 'watch', message: `${where}: event outside its range ${show(e)}` });
        } else if (!expectedRevisions.has(e.resourceVersion)) {
          violations.push({ checker: 'watch', message: `${where}: event the store never committed ${show(e)}` });
        } else {
          const truthEvent = expected.find((x) => x.resourceVersion === e.resourceVersion) as ExpectedEvent;
          if (truthEvent.type !== e.type || truthEvent.name !== e.name || truthEvent.value !== e.value) {
            violations.push({ checker: 'watch', message: `${where}: saw ${show(e)}, the store committed ${show(truthEvent)}` });
          }
        }
      }
    }
  }
  return violations;
}
