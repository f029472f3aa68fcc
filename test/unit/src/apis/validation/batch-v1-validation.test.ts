import { expect } from 'chai';
import { cronScheduleError, validateCreate, validateStatusUpdate, validateUpdate, withGeneratedJobSelector } from '../../../../../src/apis/validation';
import { cronJob, edited, job, messages } from './fixtures';
import type { JsonObject } from '../../../../../src/apis/object';

const spec = (o: JsonObject): JsonObject => o['spec'] as JsonObject;
const podSpecOf = (o: JsonObject): JsonObject => (spec(o)['template'] as JsonObject)['spec'] as JsonObject;

// Rules of k8s.io/kubernetes pkg/apis/batch/validation/validation.go (v1.25) and the schedule
// parser it calls, github.com/robfig/cron/v3 ParseStandard.
describe('apis/validation batch/v1', () => {
  describe('Job', () => {
    it('accepts the fixture', () => expect(validateCreate(job(), true)).to.deep.equal([]));

    const cases: Array<[string, (j: JsonObject) => void, string[]]> = [
      ['requires restartPolicy OnFailure or Never (Always is the default it would get)', (j) => (podSpecOf(j)['restartPolicy'] = 'Always'), [
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
      ]],
      ['refuses negative counts', (j) => Object.assign(spec(j), { parallelism: -1, backoffLimit: -2 }), [
        'spec.parallelism: Invalid value: -1: must be greater than or equal to 0',
        'spec.backoffLimit: Invalid value: -2: must be greater than or equal to 0',
      ]],
      ['requires completions for Indexed jobs', (j) => (spec(j)['completionMode'] = 'Indexed'), ['spec.completions: Required value: when completion mode is Indexed']],
      ['checks completionMode', (j) => (spec(j)['completionMode'] = 'Sorted'), ['spec.completionMode: Unsupported value: "Sorted": supported values: "NonIndexed", "Indexed"']],
      ['requires the generated selector unless manualSelector', (j) => (spec(j)['selector'] = { matchLabels: { app: 'pi' } }), [
        'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"pi"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` not auto-generated',
        'spec.template.metadata.labels: Invalid value: map[string]string{"controller-uid":"j-1", "job-name":"pi"}: `selector` does not match template `labels`',
      ]],
      ['accepts a manual selector that matches', (j) => Object.assign(spec(j), { manualSelector: true, selector: { matchLabels: { 'job-name': 'pi' } } }), []],
      ['requires the generated template labels', (j) => (((spec(j)['template'] as JsonObject)['metadata'] as JsonObject)['labels'] = { 'controller-uid': 'j-1' }), [
        "spec.template.metadata.labels[job-name]: Required value: must be 'pi'",
      ]],
    ];
    for (const [name, edit, expected] of cases) it(name, () => expect(messages(validateCreate(edited(job(), edit), true))).to.deep.equal(expected));

    it('generates the selector and labels the strategy would', () => {
      const bare = edited(job(), (j) => {
        delete spec(j)['selector'];
        (spec(j)['template'] as JsonObject)['metadata'] = { labels: { app: 'pi' } };
      });
      expect(messages(validateCreate(bare, true))).to.include('spec.selector: Required value');
      const generated = withGeneratedJobSelector(bare);
      expect(spec(generated)['selector']).to.deep.equal({ matchLabels: { 'controller-uid': 'j-1' } });
      expect(validateCreate(generated, true)).to.deep.equal([]);
    });

    it('names indexed pods within a DNS label', () => {
      const long = edited(job(), (j) => {
        (j['metadata'] as JsonObject)['name'] = 'a'.repeat(62);
        Object.assign(spec(j), { completionMode: 'Indexed', completions: 10, manualSelector: true, selector: { matchLabels: { x: 'y' } } });
        ((spec(j)['template'] as JsonObject)['metadata'] as JsonObject)['labels'] = { x: 'y' };
      });
      expect(messages(validateCreate(long, true))).to.deep.equal([`metadata.name: Invalid value: "${'a'.repeat(62)}": will not able to create pod with invalid DNS label: ${'a'.repeat(62)}-9`]);
    });

    it('keeps the template, selector and completions immutable (v1.25)', () => {
      const next = edited(job(), (j) => {
        spec(j)['completions'] = 3;
        ((podSpecOf(j)['containers'] as JsonObject[])[0] as JsonObject)['image'] = 'perl:2';
      });
      const fields = validateUpdate(next, job(), true).map((e) => `${e.field} ${e.detail}`);
      expect(fields).to.deep.equal(['spec.completions field is immutable', 'spec.template field is immutable']);
      expect(messages(validateUpdate(edited(job(), (j) => (spec(j)['completions'] = 3)), job(), true))).to.deep.equal(['spec.completions: Invalid value: 3: field is immutable']);
    });

    it('lets a suspended, never-started Job change its scheduling directives', () => {
      const suspended = edited(job(), (j) => (spec(j)['suspend'] = true));
      const moved = edited(suspended, (j) => {
        podSpecOf(j)['nodeSelector'] = { zone: 'b' };
        podSpecOf(j)['affinity'] = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }] } } };
      });
      expect(validateUpdate(moved, suspended, true)).to.deep.equal([]);
      const podAffinity = edited(suspended, (j) => (podSpecOf(j)['affinity'] = { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone' }] } }));
      expect(messages(validateUpdate(podAffinity, suspended, true)).map((m) => m.split(':')[0])).to.deep.equal(['spec.template']);
      const started = edited(suspended, (j) => (j['status'] = { startTime: '2024-01-01T00:00:00Z' }));
      expect(messages(validateUpdate(moved, started, true)).map((m) => m.split(':')[0])).to.deep.equal(['spec.template']);
    });
  });

  describe('CronJob', () => {
    it('accepts the fixture', () => expect(validateCreate(cronJob(), true)).to.deep.equal([]));

    const cases: Array<[string, (c: JsonObject) => void, string[]]> = [
      ['limits names to 52 characters', (c) => ((c['metadata'] as JsonObject)['name'] = 'n'.repeat(53)), [`metadata.name: Invalid value: "${'n'.repeat(53)}": must be no more than 52 characters`]],
      ['requires a schedule', (c) => (spec(c)['schedule'] = ''), ['spec.schedule: Required value']],
      ['reports the parser error for a bad schedule', (c) => (spec(c)['schedule'] = 'every day'), ['spec.schedule: Invalid value: "every day": expected exactly 5 fields, found 2: [every day]']],
      ['checks concurrencyPolicy', (c) => (spec(c)['concurrencyPolicy'] = 'Sometimes'), [
        'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
      ]],
      ['validates the job template', (c) => (((spec(c)['jobTemplate'] as JsonObject)['spec'] as JsonObject)['template'] as JsonObject)['spec'] = { containers: [], restartPolicy: 'Never' }, [
        'spec.jobTemplate.spec.template.spec.containers: Required value',
      ]],
      ['refuses a selector in the job template', (c) => (((spec(c)['jobTemplate'] as JsonObject)['spec'] as JsonObject)['selector'] = { matchLabels: { a: 'b' } }), [
        'spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"a":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated',
      ]],
      ['checks the time zone', (c) => (spec(c)['timeZone'] = 'Mars/Olympus'), ['spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus']],
      ['refuses "Local" as a time zone', (c) => (spec(c)['timeZone'] = 'Local'), [
        'spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones',
      ]],
      ['refuses a time zone both in the schedule and in timeZone', (c) => Object.assign(spec(c), { schedule: 'TZ=UTC 0 3 * * *', timeZone: 'Europe/Paris' }), [
        'spec.schedule: Invalid value: "TZ=UTC 0 3 * * *": cannot use both timeZone field and TZ or CRON_TZ in schedule',
      ]],
      ['refuses negative history limits', (c) => (spec(c)['failedJobsHistoryLimit'] = -1), ['spec.failedJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0']],
    ];
    for (const [name, edit, expected] of cases) it(name, () => expect(messages(validateCreate(edited(cronJob(), edit), true))).to.deep.equal(expected));

    it('checks uncounted terminated pods in Job status', () => {
      const next = edited(job(), (j) => (j['status'] = { active: -1, uncountedTerminatedPods: { succeeded: ['a', ''], failed: ['a'] } }));
      expect(messages(validateStatusUpdate(next, job(), true))).to.deep.equal([
        'status.active: Invalid value: -1: must be greater than or equal to 0',
        'status.uncountedTerminatedPods.succeeded[1]: Invalid value: "": must not be empty',
        'status.uncountedTerminatedPods.failed[0]: Duplicate value: "a"',
      ]);
    });

    it('does not re-check the name length on update', () => {
      const long = edited(cronJob(), (c) => ((c['metadata'] as JsonObject)['name'] = 'n'.repeat(53)));
      expect(validateUpdate(edited(long, (c) => (spec(c)['schedule'] = '@hourly')), long, true)).to.deep.equal([]);
    });
  });

  describe('cron schedules', () => {
    const table: Array<[string, string | undefined]> = [
      ['*/5 * * * *', undefined],
      ['0 0 1-15/2 jan-jun MON-FRI', undefined],
      ['@daily', undefined],
      ['@every 1h30m', undefined],
      ['CRON_TZ=Europe/Paris 0 9 * * *', undefined],
      ['', 'empty spec string'],
      ['* * * *', 'expected exactly 5 fields, found 4: [* * * *]'],
      ['60 * * * *', 'end of range (60) above maximum (59): 60'],
      ['* * 0 * *', 'beginning of range (0) below minimum (1): 0'],
      ['5-1 * * * *', 'beginning of range (5) beyond end of range (1): 5-1'],
      ['*/0 * * * *', 'step of range should be a positive number: */0'],
      ['x * * * *', 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'],
      ['1-2-3 * * * *', 'too many hyphens: 1-2-3'],
      ['1/2/3 * * * *', 'too many slashes: 1/2/3'],
      ['* * * * 8', 'end of range (8) above maximum (6): 8'],
      ['@fortnightly', 'unrecognized descriptor: @fortnightly'],
      ['@every 5', 'failed to parse duration @every 5: time: missing unit in duration "5"'],
      ['TZ=Nowhere/Land * * * * *', 'provided bad location Nowhere/Land: unknown time zone Nowhere/Land'],
    ];
    for (const [schedule, expected] of table) {
      it(`${JSON.stringify(schedule)} -> ${expected ?? 'ok'}`, () => expect(cronScheduleError(schedule)).to.equal(expected));
    }
  });
});
