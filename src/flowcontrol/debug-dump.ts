/**
 * The text of /debug/api_priority_and_fairness/dump_priority_levels, dump_queues and
 * dump_requests, laid out as v1.25 does (apiserver pkg/util/flowcontrol/dump.go: comma-ended
 * cells aligned by Go's tabwriter with minimum width 8 and padding 1), from the controller's
 * queue dumps. Levels are listed by name.
 */
import type { FlowController } from './flow-controller';

/** Go's text/tabwriter with minwidth 8, tabwidth 0, padding 1, pad ' ', flags 0, on lines of tab-ended cells. */
export function tabulate(rows: readonly string[][]): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (let i = 0; i < row.length - 1; i++) widths[i] = Math.max(widths[i] ?? 0, Math.max(8, row[i].length + 1));
  }
  return rows.map((row) => row.map((cell, i) => (i < row.length - 1 ? cell.padEnd(widths[i]) : cell)).join('')).join('\n') + '\n';
}

/** Cells as v1.25 writes them: every one but the last followed by a comma. */
function cells(values: ReadonlyArray<string | number | boolean>): string[] {
  return values.map((value, i) => (i < values.length - 1 ? `${String(value)},` : String(value)));
}

export function dumpPriorityLevels(controller: FlowController): string {
  const rows = [cells(['PriorityLevelName', 'ActiveQueues', 'IsIdle', 'IsQuiescing', 'WaitingRequests', 'ExecutingRequests'])];
  for (const level of [...controller.queueDumps()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (level.queues === undefined) {
      rows.push(cells([level.name, '<none>', '<none>', '<none>', '<none>', '<none>']));
      continue;
    }
    const active = level.queues.filter((q) => q.pendingRequests > 0).length;
    rows.push(cells([level.name, active, level.isIdle, level.quiescing, level.waiting, level.executing]));
  }
  return tabulate(rows);
}

export function dumpQueues(controller: FlowController): string {
  const rows = [cells(['PriorityLevelName', 'Index', 'PendingRequests', 'ExecutingRequests', 'SeatsInUse', 'NextDispatchR', 'InitialSeatsSum', 'MaxSeatsSum', 'TotalWorkSum'])];
  for (const level of [...controller.queueDumps()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (level.queues === undefined) {
      rows.push(cells([level.name, '<none>', '<none>', '<none>', '<none>', '<none>', '<none>', '<none>', '<none>']));
      continue;
    }
    for (const queue of level.queues) {
      const seats = `${queue.initialSeatsSum}`;
      rows.push(cells([level.name, queue.index, queue.pendingRequests, queue.executingRequests, queue.seatsInUse, `${queue.nextDispatchR.toFixed(8)}ss`, seats, seats, `${(queue.initialSeatsSum * 0.003).toFixed(8)}ss`]));
    }
  }
  return tabulate(rows);
}

export function dumpRequests(controller: FlowController, includeDetails: boolean, now: number): string {
  const header = ['PriorityLevelName', 'FlowSchemaName', 'QueueIndex', 'RequestIndexInQueue', 'FlowDistingsher', 'ArriveTime', 'InitialSeats', 'FinalSeats', 'AdditionalLatency'];
  if (includeDetails) header.push('UserName', 'Verb', 'APIPath', 'Namespace', 'Name', 'APIVersion', 'Resource', 'SubResource');
  const rows = [cells(header)];
  const wallNow = Date.now();
  for (const level of [...controller.queueDumps()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (level.queues === undefined) continue;
    for (const queue of level.queues) {
      queue.waiting.forEach((request, index) => {
        const arrived = new Date(wallNow - (now - request.arrivedAt) * 1000).toISOString();
        const values: Array<string | number> = [level.name, request.flowSchema, queue.index, index, request.distinguisher, arrived, request.seats, request.finalSeats, `${request.additionalLatencySeconds * 1000}ms`];
        if (includeDetails) {
          const d = request.details;
          values.push(d.userName ?? '', d.verb ?? '', d.path ?? '', d.namespace ?? '', d.name ?? '', d.apiVersion ?? '', d.resource ?? '', d.subresource ?? '');
        }
        rows.push(cells(values));
      });
    }
  }
  return tabulate(rows);
}
