/**
 * Admission's Prometheus metrics under kube-apiserver v1.25's names and labels (spec 02 §6.2;
 * apiserver pkg/admission/metrics), registered in the server's registry (served at /metrics):
 *
 * | metric | labels | when |
 * |---|---|---|
 * | apiserver_admission_step_admission_duration_seconds | type (admit, validate), operation, rejected | each phase of the chain |
 * | apiserver_admission_webhook_admission_duration_seconds | name, type (admit, validating), operation, rejected | each webhook call |
 * | apiserver_admission_webhook_request_total | name, type, operation, code, rejected | each webhook call |
 * | apiserver_admission_webhook_rejection_count | name, type, operation, error_type, rejection_code | each refusal a webhook caused |
 * | apiserver_admission_webhook_fail_open_count | name, type | each failure ignored (failurePolicy Ignore) |
 *
 * error_type is `calling_webhook_error` (no usable answer, failurePolicy Fail), `no_error` (the
 * webhook said no) or `apiserver_internal_error` (the server's own failure); codes above 600 are
 * counted as 600. Beyond v1.25, the circuit breaker's: carina_admission_webhook_circuit_open
 * (1 while a webhook's circuit is open or half-open), carina_admission_webhook_circuit_opened_total
 * and carina_admission_webhook_short_circuited_total (calls not made).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export type WebhookRejectionErrorType = 'calling_webhook_error' | 'no_error' | 'apiserver_internal_error';
/** `admit` for mutating webhooks, `validating` for validating ones, as v1.25 labels them. */
export type WebhookStepType = 'admit' | 'validating';

/** What the dispatchers record; AdmissionMetrics writes it to Prometheus, tests may record it. */
export interface WebhookMetricsSink {
  observeWebhook(name: string, type: WebhookStepType, operation: string, rejected: boolean, code: number, seconds: number): void;
  observeRejection(name: string, type: WebhookStepType, operation: string, errorType: WebhookRejectionErrorType, code: number): void;
  observeFailOpen(name: string, type: WebhookStepType): void;
  observeCircuitOpened(name: string, type: WebhookStepType): void;
  observeShortCircuit(name: string, type: WebhookStepType): void;
}

function boundedCode(code: number): string {
  return String(code > 600 ? 600 : code);
}

export class AdmissionMetrics implements WebhookMetricsSink {
  private readonly step: Histogram;
  private readonly webhook: Histogram;
  private readonly requests: Counter;
  private readonly rejections: Counter;
  private readonly failOpen: Counter;
  private readonly opened: Counter;
  private readonly shortCircuited: Counter;

  constructor(registry: Registry, openCircuits: () => Array<{ name: string; type: WebhookStepType }> = () => []) {
    this.step = new Histogram({
      name: 'apiserver_admission_step_admission_duration_seconds',
      help: 'Time each admission phase (admit: mutating, validate: validating) took, by operation and whether it refused the request.',
      labelNames: ['type', 'operation', 'rejected'],
      buckets: [0.005, 0.025, 0.1, 0.5, 1.0, 2.5],
      registers: [registry],
    });
    this.webhook = new Histogram({
      name: 'apiserver_admission_webhook_admission_duration_seconds',
      help: 'Time each admission webhook call took, by webhook name, type (admit or validating), operation and whether it refused the request.',
      labelNames: ['name', 'type', 'operation', 'rejected'],
      buckets: [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25],
      registers: [registry],
    });
    this.requests = new Counter({
      name: 'apiserver_admission_webhook_request_total',
      help: 'Admission webhook calls, by webhook name, type, operation, HTTP code (600 and above as 600) and whether the request was refused.',
      labelNames: ['name', 'type', 'operation', 'code', 'rejected'],
      registers: [registry],
    });
    this.rejections = new Counter({
      name: 'apiserver_admission_webhook_rejection_count',
      help: 'Requests an admission webhook made fail, by webhook name, type, operation, error type (calling_webhook_error, no_error, apiserver_internal_error) and rejection code (600 and above as 600).',
      labelNames: ['name', 'type', 'operation', 'error_type', 'rejection_code'],
      registers: [registry],
    });
    this.failOpen = new Counter({
      name: 'apiserver_admission_webhook_fail_open_count',
      help: 'Admission webhook calls that failed and were ignored (failurePolicy Ignore), by webhook name and type.',
      labelNames: ['name', 'type'],
      registers: [registry],
    });
    this.opened = new Counter({
      name: 'carina_admission_webhook_circuit_opened_total',
      help: 'Times the circuit breaker of an admission webhook opened after repeated failures, by webhook name and type.',
      labelNames: ['name', 'type'],
      registers: [registry],
    });
    this.shortCircuited = new Counter({
      name: 'carina_admission_webhook_short_circuited_total',
      help: 'Admission webhook calls not made because the webhook\'s circuit breaker was open, by webhook name and type.',
      labelNames: ['name', 'type'],
      registers: [registry],
    });
    new Gauge({
      name: 'carina_admission_webhook_circuit_open',
      help: '1 while the circuit breaker of an admission webhook is open or half-open, by webhook name and type.',
      labelNames: ['name', 'type'],
      registers: [registry],
      collect() {
        this.reset();
        for (const circuit of openCircuits()) this.set({ name: circuit.name, type: circuit.type }, 1);
      },
    });
  }

  observeStep(step: 'admit' | 'validate', operation: string, rejected: boolean, seconds: number): void {
    this.step.observe({ type: step, operation, rejected: String(rejected) }, seconds);
  }

  observeWebhook(name: string, type: WebhookStepType, operation: string, rejected: boolean, code: number, seconds: number): void {
    this.requests.inc({ name, type, operation, code: boundedCode(code), rejected: String(rejected) });
    this.webhook.observe({ name, type, operation, rejected: String(rejected) }, seconds);
  }

  observeRejection(name: string, type: WebhookStepType, operation: string, errorType: WebhookRejectionErrorType, code: number): void {
    this.rejections.inc({ name, type, operation, error_type: errorType, rejection_code: boundedCode(code) });
  }

  observeFailOpen(name: string, type: WebhookStepType): void {
    this.failOpen.inc({ name, type });
  }

  observeCircuitOpened(name: string, type: WebhookStepType): void {
    this.opened.inc({ name, type });
  }

  observeShortCircuit(name: string, type: WebhookStepType): void {
    this.shortCircuited.inc({ name, type });
  }
}
