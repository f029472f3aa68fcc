/**
 * Carina's log lines: klog's text header (what kube-apiserver v1.25 writes by default), one line
 * per record on standard error:
 *
 *     I1127 05:20:32.123456   12345 carina] <message>[ trace_id=<32 hex> span_id=<16 hex>]
 *
 * The first letter is the severity (I info, E error), then month and day, time to the
 * microsecond (UTC), the process id and `carina]`. A line written for a traced request (the
 * caller passes the request's trace context, spans.ts says why it is explicit) ends with its
 * `trace_id` and `span_id` (W3C hex, klog's key=value form), so a trace found in the collector
 * leads to its log lines (`grep trace_id=<id>`) and back.
 *
 * Why klog-like rather than JSON: it is what operators of kube-apiserver already read and
 * parse, and the message stays as written (JSON would escape its quotes, and every tool and
 * test that looks for a message's text would have to decode it first). Messages are one line:
 * newlines in them are written as `\n`.
 *
 * The logger keeps the shape every module already takes, `(line: string) => void`, with the
 * trace context as an optional second argument where a request has one. Lines hold what the
 * caller wrote: callers keep secrets out of them (STYLE.md).
 */
import { trace, type Context } from '@opentelemetry/api';

export type LogLevel = 'info' | 'error';
export type LogLine = (line: string, traceContext?: Context) => void;

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** One record in klog's header format, newline-terminated. */
export function formatLogRecord(message: string, level: LogLevel = 'info', now: Date = new Date(), pid: number = process.pid, traceContext?: Context): string {
  const micros = String(now.getUTCMilliseconds() * 1000).padStart(6, '0');
  const header = `${level === 'error' ? 'E' : 'I'}${two(now.getUTCMonth() + 1)}${two(now.getUTCDate())} ${two(now.getUTCHours())}:${two(now.getUTCMinutes())}:${two(now.getUTCSeconds())}.${micros} ${String(pid).padStart(7)} carina]`;
  let line = `${header} ${message.replace(/\r?\n/g, '\\n')}`;
  const spanContext = traceContext === undefined ? undefined : trace.getSpanContext(traceContext);
  if (spanContext !== undefined && trace.isSpanContextValid(spanContext)) line += ` trace_id=${spanContext.traceId} span_id=${spanContext.spanId}`;
  return `${line}\n`;
}

/** A logger that writes klog-like lines to `write` (standard error by default). */
export function structuredLogger(write: (text: string) => void = (text) => process.stderr.write(text)): LogLine {
  return (line: string, traceContext?: Context) => write(formatLogRecord(line, /^(fatal|error)\b/i.test(line) ? 'error' : 'info', new Date(), process.pid, traceContext));
}
