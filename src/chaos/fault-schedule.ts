/**
 * The seeded schedule of faults: which fault comes when, how long it holds and the draw that
 * picks its target. It depends on the seed, the duration and the kinds only, so a seed replays
 * the same schedule. Faults come one at a time; every kind comes once (in a seeded order) before
 * any repeats, so a run long enough for all kinds injects each of them.
 *
 * Membership faults come in turn: the two kinds are in play together or not at all, a member
 * is added before one is removed and never twice in a row, so the cluster keeps between its
 * initial number of voters and one more (the other faults keep their meaning: a quorum is still lost with two of three
 * or three of four). In the first round a remove shuffled ahead of the add swaps places with it;
 * in repeats a drawn membership kind becomes whichever of the two is due. Both depend on the
 * seed only, so the replay property holds.
 */
import { SeededRandom } from './seeded-random';

export interface PlannedFault {
  index: number;
  kind: string;
  /** Earliest start, in milliseconds after the fault phase begins (later if recovery is slow). */
  atMs: number;
  holdMs: number;
  /** A draw in [0, 1) that picks the target among the candidates at injection time. */
  targetDraw: number;
  /** A draw in [0, 1) for the fault's intensity (loss ratio, added delay). */
  intensityDraw: number;
}

export const MEMBER_ADD = 'member-add';
export const MEMBER_REMOVE = 'member-remove';

export class ScheduleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScheduleError';
  }
}

export interface ScheduleOptions {
  seed: number;
  durationMs: number;
  kinds: readonly string[];
  /** Bounds of how long a fault holds, and of the quiet gap after it heals. */
  holdMs?: [number, number];
  gapMs?: [number, number];
}

export function planFaults(options: ScheduleOptions): PlannedFault[] {
  const random = SeededRandom.derive(options.seed, 'faults');
  const [holdLow, holdHigh] = options.holdMs ?? [2000, 5000];
  const [gapLow, gapHigh] = options.gapMs ?? [2000, 4000];
  if (options.kinds.includes(MEMBER_REMOVE) !== options.kinds.includes(MEMBER_ADD)) {
    throw new ScheduleError(`${MEMBER_ADD} and ${MEMBER_REMOVE} go together: members are added and removed in turn, so the cluster keeps its initial voters and at most one more`);
  }
  const firstRound = [...options.kinds];
  for (let i = firstRound.length - 1; i > 0; i--) {
    const j = random.int(i + 1);
    [firstRound[i], firstRound[j]] = [firstRound[j], firstRound[i]];
  }
  const addAt = firstRound.indexOf(MEMBER_ADD);
  const removeAt = firstRound.indexOf(MEMBER_REMOVE);
  if (removeAt !== -1 && removeAt < addAt) [firstRound[addAt], firstRound[removeAt]] = [MEMBER_REMOVE, MEMBER_ADD];
  let addedMembers = 0;
  const faults: PlannedFault[] = [];
  let at = random.between(gapLow, gapHigh);
  while (options.kinds.length > 0) {
    const holdMs = random.between(holdLow, holdHigh);
    if (at + holdMs > options.durationMs) break;
    let kind = faults.length < firstRound.length ? firstRound[faults.length] : random.pick(options.kinds);
    if (kind === MEMBER_ADD || kind === MEMBER_REMOVE) {
      kind = addedMembers > 0 ? MEMBER_REMOVE : MEMBER_ADD;
      addedMembers += kind === MEMBER_ADD ? 1 : -1;
    }
    faults.push({ index: faults.length + 1, kind, atMs: at, holdMs, targetDraw: random.next(), intensityDraw: random.next() });
    at += holdMs + random.between(gapLow, gapHigh);
  }
  return faults;
}
