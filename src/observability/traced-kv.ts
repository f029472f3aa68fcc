/**
 * The object store's calls to its key-value store as client spans, one per call: `etcd.Range`,
 * `etcd.Txn`, `etcd.Put`, `etcd.DeleteRange`, `etcd.Compact`, with db.system.name `etcd`,
 * db.operation.name and the (first) key, as kube-apiserver v1.25's etcd3 store records the key
 * of each of its traced calls. Keys are storage paths (/registry/<resource>/<namespace>/<name>):
 * names, never values.
 *
 * Installed by the composition root only when tracing runs, around whichever KvClient the server
 * uses (the embedded replica, whose own spans then become children of these, or an etcd
 * client). Without tracing the store gets the bare client and pays nothing. Streams (watch) and
 * lease calls are not wrapped: they outlive requests or are the server's own upkeep.
 */
import { SpanKind } from '@opentelemetry/api';
import type { Bytes, KvClient, TxnRequest } from '../../raft';
import { inSpan, recordingSpan } from './spans';

const TRACED: Record<string, string> = { range: 'Range', put: 'Put', deleteRange: 'DeleteRange', txn: 'Txn', compact: 'Compact' };

function keyOf(method: string, request: unknown): Bytes | undefined {
  if (method === 'txn') {
    const txn = request as TxnRequest;
    const op = txn.success[0] as Record<string, { key?: Bytes }> | undefined;
    return txn.compare[0]?.key ?? (op === undefined ? undefined : Object.values(op)[0]?.key);
  }
  return (request as { key?: Bytes } | undefined)?.key;
}

export function tracedKvClient(kv: KvClient): KvClient {
  return new Proxy(kv, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      const operation = typeof property === 'string' ? TRACED[property] : undefined;
      if (operation === undefined) return (value as (...args: unknown[]) => unknown).bind(target);
      const call = value as (request: unknown) => Promise<unknown>;
      return (request: unknown) => {
        if (recordingSpan() === undefined) return call.call(target, request);
        const key = keyOf(property as string, request);
        return inSpan(`etcd.${operation}`, () => call.call(target, request), {
          kind: SpanKind.CLIENT,
          attributes: { 'db.system.name': 'etcd', 'db.operation.name': operation, ...(key === undefined ? {} : { 'carina.store.key': Buffer.from(key).toString('utf8') }) },
        });
      };
    },
  });
}
