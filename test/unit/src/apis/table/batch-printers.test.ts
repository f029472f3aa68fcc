import { expect } from 'chai';
import { ago, cellsOf, columnShapes, shapes } from './table-test-support';
import type { JsonObject } from '../../../../../src/apis/object';

// Columns and cells: kubernetes pkg/printers/internalversion/printers.go at v1.25 (printJob, printCronJob).
// v1.25 has neither the Job Status column nor the CronJob Timezone column of later releases.

const podTemplate = { spec: { containers: [{ name: 'pi', image: 'perl:5.34' }], restartPolicy: 'Never' } };

function job(spec: JsonObject, status: JsonObject): JsonObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'pi', namespace: 'default', creationTimestamp: ago(7 * 60) },
    spec: { selector: { matchLabels: { 'controller-uid': 'abc' } }, template: podTemplate, ...spec },
    status,
  };
}

describe('job printer', () => {
  it('has the v1.25 job columns', () => {
    expect(columnShapes(job({}, {}))).to.deep.equal(
      shapes(['Name', 'string'], ['Completions', 'string'], ['Duration', 'string'], ['Age', 'string'], ['Containers', 'string', 1], ['Images', 'string', 1], ['Selector', 'string', 1]),
    );
  });

  it('prints a finished job with its fixed duration', () => {
    const finished = job({ completions: 1, parallelism: 1 }, { succeeded: 1, startTime: ago(7 * 60), completionTime: ago(7 * 60 - 75) });
    expect(cellsOf(finished)).to.deep.equal(['pi', '1/1', '75s', '7m', 'pi', 'perl:5.34', 'controller-uid=abc']);
  });

  it('measures a running job against now and leaves the duration empty before it starts', () => {
    expect(cellsOf(job({ completions: 5 }, { succeeded: 2, startTime: ago(5 * 60 + 30) })).slice(1, 3)).to.deep.equal(['2/5', '5m30s']);
    expect(cellsOf(job({ completions: 5 }, {})).slice(1, 3)).to.deep.equal(['0/5', '']);
  });

  it('prints "n/1 of p" for a work-queue job with parallelism above one', () => {
    expect(cellsOf(job({ parallelism: 3 }, { succeeded: 1 }))[1]).to.equal('1/1 of 3');
    expect(cellsOf(job({ parallelism: 1 }, {}))[1]).to.equal('0/1');
  });
});

describe('cron job printer', () => {
  function cronJob(spec: JsonObject, status: JsonObject): JsonObject {
    return {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'nightly', creationTimestamp: ago(3 * 86400) },
      spec: { schedule: '0 3 * * *', jobTemplate: { spec: { template: podTemplate } }, ...spec },
      status,
    };
  }

  it('has the v1.25 cron job columns', () => {
    expect(columnShapes(cronJob({}, {}))).to.deep.equal(
      shapes(['Name', 'string'], ['Schedule', 'string'], ['Suspend', 'boolean'], ['Active', 'integer'], ['Last Schedule', 'string'], ['Age', 'string'],
        ['Containers', 'string', 1], ['Images', 'string', 1], ['Selector', 'string', 1]),
    );
  });

  it('prints schedule, suspend as True/False, active jobs and the time since the last schedule', () => {
    const scheduled = cronJob({ suspend: false }, { active: [{ kind: 'Job', name: 'nightly-1' }], lastScheduleTime: ago(9 * 3600) });
    // The job template carries no selector, so it formats as <none>.
    expect(cellsOf(scheduled)).to.deep.equal(['nightly', '0 3 * * *', 'False', 1, '9h', '3d', 'pi', 'perl:5.34', '<none>']);
  });

  it('prints <unset> for a missing suspend flag and <none> before the first schedule', () => {
    expect(cellsOf(cronJob({}, {})).slice(2, 5)).to.deep.equal(['<unset>', 0, '<none>']);
    expect(cellsOf(cronJob({ suspend: true }, {}))[2]).to.equal('True');
  });
});
