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
import { SpanKind, type Attributes } from '@opentelemetry/api';
import type { Bytes, KvCallOptions, KvClient, TxnRequest } from '../../raft';
import { inSpan } from './spans';

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
  // Each method is wrapped (or bound) once, on first use, not on every call.
  const methods = new Map<PropertyKey, unknown>();
  return new Proxy(kv, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      const known = methods.get(property);
      if (known !== undefined) return known;
      const wrapped = wrap(target, property, value as (...args: unknown[]) => unknown);
      methods.set(property, wrapped);
      return wrapped;
    },
  });
}

function wrap(target: KvClient, property: PropertyKey, method: (...args: unknown[]) => unknown): unknown {
  const operation = typeof property === 'string' ? TRACED[property] : undefined;
  if (operation === undefined) return method.bind(target);
  const name = `etcd.${operation}`;
  return (request: unknown, options?: KvCallOptions) => {
    if (options?.trace === undefined) return method.call(target, request, options);
    const key = keyOf(property as string, request);
    const attributes: Attributes = { 'db.system.name': 'etcd', 'db.operation.name': operation };
    if (key !== undefined) attributes['carina.store.key'] = Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('utf8');
    return inSpan(name, options.trace, (trace) => method.call(target, request, { ...options, trace }) as Promise<unknown>, { kind: SpanKind.CLIENT, attributes });
  };
}
