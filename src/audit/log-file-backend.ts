/**
 * The log backend (`--audit-log-path`): each event one JSON line in the audit log file
 * (audit-log-file.ts), as `--audit-log-format=json` writes them in v1.25. A line that cannot be
 * written is lost and counted as plugin `log` (kube's log backend does the same).
 */
import type { AuditErrorReporter, AuditEventBackend, AuditEventJson } from './audit-backend';
import type { AuditLogFile } from './audit-log-file';

export const LOG_PLUGIN = 'log';

export class LogFileBackend implements AuditEventBackend {
  readonly name = LOG_PLUGIN;

  constructor(
    private readonly file: Pick<AuditLogFile, 'write' | 'close'>,
    private readonly reportError: AuditErrorReporter,
  ) {}

  processEvents(events: readonly AuditEventJson[]): boolean {
    let lost = 0;
    for (const event of events) if (!this.file.write(JSON.stringify(event))) lost++;
    if (lost > 0) this.reportError(LOG_PLUGIN, lost, 'the audit log file cannot be written');
    return lost === 0;
  }

  async shutdown(): Promise<void> {
    this.file.close();
  }
}
