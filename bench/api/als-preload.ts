/**
 * Preloaded (NODE_OPTIONS=--require) into one replica by tracing-bench.ts's ABLATE_ALS=1: turns
 * on what tracing's context manager turns on, an AsyncLocalStorage with a store entered at
 * start, so that Node tracks every promise and callback of the process and each new one
 * inherits the store, with no span made. The difference to a plain replica is the cost of
 * AsyncLocalStorage itself (Node 20 implements it with an async_hooks init hook).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const storage = new AsyncLocalStorage<object>();
storage.enterWith({ ablation: true });
// Kept reachable for the life of the process.
(globalThis as { __carinaAlsAblation?: AsyncLocalStorage<object> }).__carinaAlsAblation = storage;
