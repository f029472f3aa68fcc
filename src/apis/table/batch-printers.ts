/** Printers for the batch group, after kubernetes pkg/printers/internalversion/printers.go (v1.25). */
import { humanDuration } from './human-duration';
import {
  AGE_COLUMN,
  CONTAINERS_COLUMN,
  IMAGES_COLUMN,
  NAME_COLUMN,
  ageOf,
  ageSince,
  asArray,
  asNumber,
  asString,
  at,
  column,
  containerCells,
  formatLabelSelector,
  formatOptionalBool,
  parseTime,
  wideColumn,
  type KindPrinter,
} from './printer-support';
import { nameOf } from '../object';

const JOB_SELECTOR_COLUMN = wideColumn(
  'Selector',
  'string',
  'A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors',
);

export const jobPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column('Completions', 'string', 'The number of pods which reached phase Succeeded.'),
    column('Duration', 'string', 'Time required to complete the job.'),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    JOB_SELECTOR_COLUMN,
  ],
  printRow(job, context) {
    const succeeded = asNumber(at(job, 'status', 'succeeded'));
    const completions = at(job, 'spec', 'completions');
    const parallelism = asNumber(at(job, 'spec', 'parallelism'));
    let completionsCell: string;
    if (typeof completions === 'number') completionsCell = `${succeeded}/${completions}`;
    else if (parallelism > 1) completionsCell = `${succeeded}/1 of ${parallelism}`;
    else completionsCell = `${succeeded}/1`;

    // A running job's duration grows with the clock; a finished one is fixed.
    const startTime = parseTime(at(job, 'status', 'startTime'));
    const completionTime = parseTime(at(job, 'status', 'completionTime'));
    let duration = '';
    if (startTime !== undefined) duration = humanDuration((completionTime ?? context.now) - startTime);

    const [names, images] = containerCells(at(job, 'spec', 'template', 'spec', 'containers'));
    return {
      cells: [nameOf(job), completionsCell, duration, ageOf(job, context), names, images, formatLabelSelector(at(job, 'spec', 'selector'))],
    };
  },
};

export const cronJobPrinter: KindPrinter = {
  columns: [
    NAME_COLUMN,
    column('Schedule', 'string', 'The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.'),
    column(
      'Suspend',
      'boolean',
      'This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.',
    ),
    column('Active', 'integer', 'A list of pointers to currently running jobs.'),
    column('Last Schedule', 'string', 'Information when was the last time the job was successfully scheduled.'),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    JOB_SELECTOR_COLUMN,
  ],
  printRow(cronJob, context) {
    const lastScheduleTime = at(cronJob, 'status', 'lastScheduleTime');
    const jobSpec = at(cronJob, 'spec', 'jobTemplate', 'spec');
    const [names, images] = containerCells(at(jobSpec, 'template', 'spec', 'containers'));
    return {
      cells: [
        nameOf(cronJob),
        asString(at(cronJob, 'spec', 'schedule')),
        formatOptionalBool(at(cronJob, 'spec', 'suspend')),
        asArray(at(cronJob, 'status', 'active')).length,
        lastScheduleTime === undefined || lastScheduleTime === null ? '<none>' : ageSince(lastScheduleTime, context),
        ageOf(cronJob, context),
        names,
        images,
        formatLabelSelector(at(jobSpec, 'selector')),
      ],
    };
  },
};
