/**
 * LIST (spec 01 §2.2, §4.4, §4.5): one page or the whole collection, filtered by selectors. An
 * unpaged JSON list is streamed a page at a time at the client's pace, never held whole.
 */
import { apiVersionOf, planList, type ItemJson } from '../../registry';
import { int64Query, type RequestScope } from '../request-scope';
import { maybeWriteTable, tableRequest } from './table-response';
import { asPartialObjectMetadataList, partialKindMismatch } from '../partial-metadata';
import { isBuiltInKind } from '../../apis/field-order';
import type { JsonObject } from '../../apis/object';

const COMMA = Buffer.from(',');

/**
 * `before`, the items separated by commas, and `after`, as slices to write in order. Nothing is
 * copied: the slices are mostly views of the store's bytes. A copy of each 2 MB page would be
 * external memory, and V8 starts a full marking of the whole heap for every 64 MB or so of it:
 * with a large watch cache, that marking was most of a large chunked LIST's time.
 */
function itemSlices(items: ItemJson[], before: string, after = ''): Buffer[] {
  const slices: Buffer[] = [];
  if (before !== '') slices.push(Buffer.from(before));
  items.forEach((item, i) => {
    if (i > 0) slices.push(COMMA);
    for (const slice of item) slices.push(slice);
  });
  if (after !== '') slices.push(Buffer.from(after));
  return slices;
}

/**
 * A custom resource list's metadata as kube's UnstructuredList has it, keys sorted: the store
 * sets `continue` on every list (UpdateList), and an unstructured list keeps it even empty.
 */
function unstructuredListMetadata(metadata: JsonObject): JsonObject {
  const { continue: token, remainingItemCount, resourceVersion } = metadata;
  const sorted: JsonObject = { continue: token ?? '' };
  if (remainingItemCount !== undefined) sorted.remainingItemCount = remainingItemCount;
  sorted.resourceVersion = resourceVersion;
  return sorted;
}

export async function list(scope: RequestScope): Promise<void> {
  const plan = { ...planList(scope.query), trace: scope.ctx.trace };
  // timeoutSeconds is part of ListOptions: decoded (400 when it is no int64) even when a list ignores it.
  int64Query(scope.query, 'timeoutSeconds');
  const filter = scope.selectorFilter();
  const { resource } = scope;
  const table = tableRequest(scope);
  const choice = scope.ctx.response.negotiate(scope.offer(true));
  if (choice.partial !== undefined && choice.partial.kind !== 'PartialObjectMetadataList') throw partialKindMismatch(choice.partial.kind, `*v1.${resource.listKind}`);
  // Unpaged, or resourceVersion="0" (whose limit is ignored, as kube's cacher ignores it): streamed.
  if ((plan.limit === 0 || plan.mode.kind === 'any') && choice.representation === 'json' && table === undefined && choice.partial === undefined && !choice.pretty) {
    const sink = scope.ctx.response.stream();
    let started = false;
    let first = true;
    // A custom resource list is an UnstructuredList: its keys sorted, items before kind and metadata.
    const unstructured = !isBuiltInKind(apiVersionOf(resource), resource.listKind);
    let tail = ']}\n';
    await scope.storage.list(scope.namespace, plan, filter, async (items, resourceVersion) => {
      if (!started) {
        started = true;
        sink.start('application/json');
        if (unstructured) {
          sink.write(Buffer.from(`{"apiVersion":${JSON.stringify(apiVersionOf(resource))},"items":[`));
          tail = `],"kind":${JSON.stringify(resource.listKind)},"metadata":${JSON.stringify(unstructuredListMetadata({ resourceVersion }))}}\n`;
        } else {
          sink.write(Buffer.from(`{"kind":${JSON.stringify(resource.listKind)},"apiVersion":${JSON.stringify(apiVersionOf(resource))},"metadata":{"resourceVersion":${JSON.stringify(resourceVersion)}},"items":[`));
        }
      }
      if (items.length === 0) return;
      // The client's pace is waited for between batches, so the server holds at most about one
      // batch of the list (as views of stored bytes, which the store holds anyway).
      const full = !sink.writeAll(itemSlices(items, first ? '' : ','));
      first = false;
      if (full) await sink.drained();
    });
    sink.write(Buffer.from(tail));
    sink.end();
    return;
  }
  if (choice.representation === 'json' && table === undefined && choice.partial === undefined && !choice.pretty) {
    // Built-in kinds read from the store (each item's stored JSON with its resourceVersion spliced
    // in) or by a consistent read from the watch cache (each item's JSON as the cache keeps it).
    const page = await scope.storage.listJson(scope.namespace, plan, filter);
    if (page !== undefined) {
      const metadata: JsonObject = { resourceVersion: page.resourceVersion };
      if (page.continue !== undefined) metadata.continue = page.continue;
      if (page.remainingItemCount !== undefined) metadata.remainingItemCount = page.remainingItemCount;
      const head = `{"kind":${JSON.stringify(resource.listKind)},"apiVersion":${JSON.stringify(apiVersionOf(resource))},"metadata":${JSON.stringify(metadata)},"items":[`;
      scope.ctx.response.writeJsonSlices(200, itemSlices(page.items, head, ']}\n'));
      return;
    }
  }
  const result = await scope.storage.list(scope.namespace, plan, filter);
  const metadata: JsonObject = { resourceVersion: result.resourceVersion };
  if (result.continue !== undefined) metadata.continue = result.continue;
  if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
  respondWithList(scope, result.items, metadata);
}

/** A list of `items` in the representation the client negotiated (a Table, partial metadata, JSON or Protobuf). */
export function respondWithList(scope: RequestScope, items: JsonObject[], metadata: JsonObject): void {
  const { resource } = scope;
  const choice = scope.ctx.response.negotiate(scope.offer(true));
  if (maybeWriteTable(scope, items, metadata)) return;
  if (choice.partial !== undefined) {
    scope.ctx.response.writeObject(200, asPartialObjectMetadataList(items, metadata, choice.partial.apiVersion), undefined, 'items');
    return;
  }
  // The items are as read, in kube's field order already.
  const listMetadata = isBuiltInKind(apiVersionOf(resource), resource.listKind) ? metadata : unstructuredListMetadata(metadata);
  scope.ctx.response.writeObject(200, { kind: resource.listKind, apiVersion: apiVersionOf(resource), metadata: listMetadata, items }, undefined, 'items');
}
