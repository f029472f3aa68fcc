/**
 * Events: v1.25 serves core v1 Event and events.k8s.io/v1 Event from one store of core v1 Events
 * (events.k8s.io/v1beta1 is no longer served in v1.25). The fields map one to one
 * (k8s.io/kubernetes pkg/apis/events/v1/conversion.go and its generated conversions): regarding is
 * involvedObject, note is message, reportingController is reportingComponent, and the deprecated*
 * fields are source, firstTimestamp, lastTimestamp and count; the rest keep their names.
 */
import { ConversionFamily } from './conversion-family';
import { copyField } from './json-object';
import type { JsonObject } from '../object';

const CORE = 'v1';
const EVENTS = 'events.k8s.io/v1';

/** [core v1 field, events.k8s.io/v1 field], in core v1's Go field order. */
const CORE_TO_EVENTS: readonly (readonly [string, string])[] = [
  ['involvedObject', 'regarding'],
  ['reason', 'reason'],
  ['message', 'note'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
  ['type', 'type'],
  ['eventTime', 'eventTime'],
  ['series', 'series'],
  ['action', 'action'],
  ['related', 'related'],
  ['reportingComponent', 'reportingController'],
  ['reportingInstance', 'reportingInstance'],
];

/** events.k8s.io/v1's Go field order. */
const EVENTS_FIELD_ORDER: readonly string[] = [
  'eventTime', 'series', 'reportingController', 'reportingInstance', 'action', 'reason', 'regarding', 'related', 'note', 'type',
  'deprecatedSource', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp', 'deprecatedCount',
];

const EVENTS_TO_CORE = new Map(CORE_TO_EVENTS.map(([core, events]) => [events, core]));
const CORE_TO_EVENTS_MAP = new Map(CORE_TO_EVENTS);

function eventHeader(object: JsonObject, apiVersion: string): JsonObject {
  const out: JsonObject = { kind: 'Event', apiVersion };
  copyField(object, 'metadata', out);
  return out;
}

function toCore(event: JsonObject): JsonObject {
  const out = eventHeader(event, CORE);
  for (const [coreField] of CORE_TO_EVENTS) {
    const eventsField = CORE_TO_EVENTS_MAP.get(coreField) as string;
    copyField(event, eventsField, out, coreField);
  }
  return out;
}

function toEvents(core: JsonObject): JsonObject {
  const out = eventHeader(core, EVENTS);
  for (const eventsField of EVENTS_FIELD_ORDER) {
    copyField(core, EVENTS_TO_CORE.get(eventsField) as string, out, eventsField);
  }
  return out;
}

export const eventConversion: ConversionFamily = {
  kind: 'Event',
  hubApiVersion: CORE,
  apiVersions: [CORE, EVENTS],
  toHub: (object, apiVersion) => (apiVersion === EVENTS ? toCore(object) : toCore(toEvents(object))),
  fromHub: (hub, apiVersion) => (apiVersion === EVENTS ? toEvents(hub) : toCore(toEvents(hub))),
};
