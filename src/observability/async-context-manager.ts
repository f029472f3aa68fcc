/**
 * The OpenTelemetry context manager Carina registers when tracing is on: the active context
 * travels with the asynchronous work that continues it, through Node's AsyncLocalStorage.
 *
 * Cost: AsyncLocalStorage makes Node track every promise once its first `run` happens. Carina
 * only makes a context current when it holds a recording span (src/observability/spans.ts and
 * the tracing filter), so a server whose tracing samples nothing never enters `with` and never
 * pays for it; a server with tracing off (no --tracing-config-file) never loads this module.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';

export class AsyncContextManager implements ContextManager {
  private storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const call = thisArg === undefined ? fn : fn.bind(thisArg);
    return this.storage.run(context, call as (...a: A) => ReturnType<F>, ...args);
  }

  /** Binds functions only: Carina never asks to bind an event emitter. */
  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const manager = this;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(context, () => fn.apply(this, args));
    } as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    this.storage = new AsyncLocalStorage<Context>();
    return this;
  }
}
