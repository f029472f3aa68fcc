/**
 * The APIService availability controller (kube-aggregator pkg/controllers/status in v1.25): every
 * APIService gets an `Available` condition. A local one (no service) is always available
 * (reason Local); a remote one is available when its Service exists (ServiceNotFound), listens
 * on the named port (ServicePortError), has an address (MissingEndpoints), and answers a GET of
 * /apis/<group>/<version> with a 2xx within 5 s (FailedDiscoveryCheck), then reason Passed. The
 * condition is written only when it changes; lastTransitionTime moves only when its status does.
 * Every process runs the checks (each serves the aggregated OpenAPI, downloaded when a check
 * passes); only those with the replica's duties write the conditions (`writeStatus`).
 */
import type { GenericRegistry } from '../registry';
import { sendToBackend } from '../proxy';
import { allApiServices, resolveEndpoint, specOf, transportFor, type ApiServiceLookup } from './api-services';
import type { AggregatedOpenApi } from './aggregated-openapi';
import type { JsonObject } from '../apis/object';

const DISCOVERY_CHECK_TIMEOUT_MS = 5000;

export interface AvailableCondition {
  type: 'Available';
  status: 'True' | 'False';
  reason: string;
  message: string;
  lastTransitionTime?: string;
}

export interface AvailabilityControllerOptions {
  lookup: ApiServiceLookup;
  registry: GenericRegistry;
  proxyClient: { cert: string; key: string };
  intervalMs: number;
  log: (line: string) => void;
  /** Where the specs of available extension servers are downloaded to (every process serves the OpenAPI). */
  openApi?: AggregatedOpenApi;
}

export class AvailabilityController {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  /** Whether this process writes the conditions (the replica's duties), besides checking. */
  writeStatus = false;

  constructor(private readonly options: AvailabilityControllerOptions) {}

  start(): void {
    if (this.timer !== undefined || this.running !== undefined) return;
    const tick = () => {
      if (this.stopped) return;
      this.running = this.checkAll().catch((err: unknown) => this.options.log(`APIService availability: ${(err as Error).message}`)).finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, this.options.intervalMs);
      });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** What the condition of `apiService` should be now. */
  async desiredCondition(apiService: JsonObject): Promise<AvailableCondition> {
    const spec = specOf(apiService);
    if (spec.service === undefined || spec.service === null) return { type: 'Available', status: 'True', reason: 'Local', message: 'Local APIServices are always available' };
    const endpoint = resolveEndpoint(this.options.lookup, spec);
    if (!endpoint.ok) return { type: 'Available', status: 'False', reason: endpoint.reason, message: endpoint.message };
    const url = new URL(`/apis/${spec.group ?? ''}/${spec.version ?? ''}`, endpoint.url);
    const origin = `${url.protocol}//${url.host}${url.pathname}`;
    try {
      const response = await sendToBackend({ method: 'GET', target: url, headers: { 'x-remote-user': 'system:kube-aggregator', 'x-remote-group': 'system:masters' }, transport: transportFor(spec, this.options.proxyClient, DISCOVERY_CHECK_TIMEOUT_MS) });
      response.body.resume();
      if (response.status >= 200 && response.status < 300) {
        const name = String((apiService.metadata as { name?: string }).name);
        const transport = transportFor(spec, this.options.proxyClient, DISCOVERY_CHECK_TIMEOUT_MS);
        await this.options.openApi?.refresh(name, spec.group ?? '', spec.version ?? '', endpoint.url, transport).catch((err: unknown) => this.options.log(`APIService ${name}: downloading its OpenAPI: ${(err as Error).message}`));
        return { type: 'Available', status: 'True', reason: 'Passed', message: 'all checks passed' };
      }
      return { type: 'Available', status: 'False', reason: 'FailedDiscoveryCheck', message: `failing or missing response from ${origin}: bad status from ${origin}: ${response.status}` };
    } catch (err) {
      return { type: 'Available', status: 'False', reason: 'FailedDiscoveryCheck', message: `failing or missing response from ${origin}: Get "${origin}": ${(err as Error).message}` };
    }
  }

  async checkAll(): Promise<void> {
    if (!this.options.lookup.cache.isReady) return;
    const apiServices = allApiServices(this.options.lookup);
    this.options.openApi?.retain(new Set(apiServices.map((a) => String((a.metadata as { name?: string }).name))));
    for (const apiService of apiServices) {
      if (this.stopped) return;
      const desired = await this.desiredCondition(apiService);
      if (!this.writeStatus) continue;
      const status = (apiService.status ?? {}) as { conditions?: AvailableCondition[] };
      const current = (status.conditions ?? []).find((c) => c.type === 'Available');
      if (current !== undefined && current.status === desired.status && current.reason === desired.reason && current.message === desired.message) continue;
      const lastTransitionTime = current !== undefined && current.status === desired.status && current.lastTransitionTime !== undefined ? current.lastTransitionTime : new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      const conditions = [...(status.conditions ?? []).filter((c) => c.type !== 'Available'), { ...desired, lastTransitionTime }];
      const name = String((apiService.metadata as { name?: string }).name);
      try {
        await this.options.registry.update(this.options.lookup.apiServices, '', name, { ...apiService, status: { ...status, conditions } }, { dryRun: false, subresource: 'status' });
        if (desired.status === 'False') this.options.log(`APIService ${name} is not available: ${desired.reason}: ${desired.message}`);
      } catch (err) {
        // Another replica wrote it first, or it was deleted: the next pass sees the new state.
        this.options.log(`APIService ${name}: ${(err as Error).message}`);
      }
    }
  }
}
