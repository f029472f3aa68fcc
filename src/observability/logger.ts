/**
 * Carina's log lines: structured, one JSON object per line on standard error (the format choice
 * is documented in ARCHITECTURE.md, "Tracing and logs"). Each line has `ts` (RFC 3339 with
 * milliseconds, UTC), `level` and `msg`; a line written while a traced request's span is current
 * also has `trace_id` and `span_id` (W3C hex), so a trace found in the collector leads to its log
 * lines and back. JSON was chosen over klog's text form because every field, the message
 * included, is then unambiguous to a log pipeline; `jq -r .msg` gives the text back.
 *
 * The logger keeps the shape every module already takes, `(line: string) => void`, so nothing
 * below the composition root changes. Lines are never longer than one write, and hold what the
 * caller wrote: callers keep secrets out of them (STYLE.md).
 */
import { context, trace } from '@opentelemetry/api';

export type LogLevel = 'info' | 'error';
export type LogLine = (line: string) => void;

/** One log line as an object (exported for tests and tools that read the log). */
export interface LogRecord {
  ts: string;
  level: LogLevel;
  msg: string;
  trace_id?: string;
  span_id?: string;
}

export function formatLogRecord(message: string, level: LogLevel = 'info', now: Date = new Date()): string {
  const record: LogRecord = { ts: now.toISOString(), level, msg: message };
  const spanContext = trace.getSpanContext(context.active());
  if (spanContext !== undefined && trace.isSpanContextValid(spanContext)) {
    record.trace_id = spanContext.traceId;
    record.span_id = spanContext.spanId;
  }
  return JSON.stringify(record) + '\n';
}

/** A logger that writes JSON lines to `write` (standard error by default). */
export function structuredLogger(write: (text: string) => void = (text) => process.stderr.write(text)): LogLine {
  return (line: string) => write(formatLogRecord(line, /^(fatal|error)\b/i.test(line) ? 'error' : 'info'));
}
