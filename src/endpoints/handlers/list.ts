/**
 * LIST (spec 01 §2.2, §4.4, §4.5): one page or the whole collection, filtered by selectors. An
 * unpaged JSON list is streamed item by item, never held whole as one string.
 */
import { apiVersionOf, planList, type JsonObject } from '../../registry';
import type { RequestScope } from '../request-scope';
import { maybeWriteTable, tableRequest } from './table-response';

export async function list(scope: RequestScope): Promise<void> {
  const plan = planList(scope.query);
  const filter = scope.selectorFilter();
  const { resource } = scope;
  const table = tableRequest(scope);
  const choice = scope.ctx.response.negotiate(scope.offer(true));
  if (plan.limit === 0 && choice.representation === 'json' && table === undefined && !choice.pretty) {
    const sink = scope.ctx.response.stream();
    let started = false;
    let first = true;
    await scope.registry.list(resource, scope.namespace, plan, filter, async (items, resourceVersion) => {
      if (!started) {
        started = true;
        sink.start('application/json');
        sink.write(Buffer.from(`{"kind":${JSON.stringify(resource.listKind)},"apiVersion":${JSON.stringify(apiVersionOf(resource))},"metadata":{"resourceVersion":${JSON.stringify(resourceVersion)}},"items":[`));
      }
      for (const item of items) {
        if (!sink.write(Buffer.from((first ? '' : ',') + JSON.stringify(item)))) await sink.drained();
        first = false;
      }
    });
    sink.write(Buffer.from(']}\n'));
    sink.end();
    return;
  }
  const result = await scope.registry.list(resource, scope.namespace, plan, filter);
  const metadata: JsonObject = { resourceVersion: result.resourceVersion };
  if (result.continue !== undefined) metadata.continue = result.continue;
  if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
  if (maybeWriteTable(scope, result.items, metadata)) return;
  scope.ctx.response.writeObject(200, { kind: resource.listKind, apiVersion: apiVersionOf(resource), metadata, items: result.items });
}
