/**
 * What a chaos run records: the API operations clients issued on single objects (with call and
 * return times and whether their outcome is known), what each watch saw, and the store's own
 * history of the objects (the truth the checkers compare against).
 */

export type ApiInput =
  | { op: 'create'; name: string; value: string; appliedResourceVersion?: string }
  /** An update carrying metadata.resourceVersion as its precondition. */
  | { op: 'update'; name: string; value: string; expectedResourceVersion: string; appliedResourceVersion?: string }
  | { op: 'delete'; name: string }
  | { op: 'get'; name: string };

/*
 * appliedResourceVersion: set by the checker, never by the client, on a write whose answer was
 * lost but whose value the store's history holds: the version it was committed at.
 */

export type ApiOutput =
  /** 2xx. value and resourceVersion are those of the object returned (unset for a delete). */
  | { status: 'ok'; value?: string; resourceVersion?: string }
  /** 409: AlreadyExists for a create, Conflict for an update. */
  | { status: 'conflict' }
  /** 404. */
  | { status: 'not-found' };

export type Outcome = 'ok' | 'failed' | 'indefinite';

export interface ApiOperation {
  clientId: number;
  input: ApiInput;
  /** Milliseconds since the run started. */
  call: number;
  /** Infinity when the outcome is unknown (timeout, reset, 5xx without a definite Status). */
  return: number;
  /** Unset exactly when the operation is indefinite. */
  output?: ApiOutput;
  /** The HTTP status or the transport error, for the report. */
  detail: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface ObservedEvent {
  type: WatchEventType;
  name: string;
  /** The value of the object in the event (for DELETED: its last value). */
  value: string | null;
  resourceVersion: number;
  /** Which watch request of its watcher delivered it (1, 2, ...), to tell resumes apart in reports. */
  stream?: number;
}

/**
 * One stretch of a watch with no relist in it: from the revision it was listed or resumed at
 * (exclusive) to the highest revision the watch is known to have delivered everything up to
 * (an event's or a bookmark's, inclusive). A resume from the last revision continues a segment;
 * a 410 ends it and the relist starts another.
 */
export interface WatchSegment {
  from: number;
  through: number;
  events: ObservedEvent[];
}

export interface WatchRecord {
  watcherId: number;
  segments: WatchSegment[];
  resumes: number;
  relists: number;
}

/** A change of one object as the store committed it, in revision order. */
export interface StoreChange {
  revision: number;
  name: string;
  /** null: deleted. */
  value: string | null;
}

export interface Violation {
  checker: 'writes' | 'linearizability' | 'watch' | 'recovery' | 'membership';
  message: string;
}
