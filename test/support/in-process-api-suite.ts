/**
 * The set-up the in-process pipeline tests share (test/unit/src/endpoints/pipeline/): one
 * InProcessApi for a mocha suite, started before its first test and stopped after its last (a
 * PKI and a watch cache are too slow to make per test), and a namespace of each test's own,
 * created before it, so that no test sees another's objects.
 */
import { InProcessApi } from './in-process-api';
import type { MemoryKvHooks } from './memory-kv';

/** What a suite's tests reach through inProcessApiSuite, read when a test runs. */
export interface InProcessApiSuite {
  /** The server. */
  readonly api: InProcessApi;
  /** The running test's namespace. */
  readonly namespace: string;
  /** The path of the running test's ConfigMaps. */
  readonly configMaps: string;
}

/**
 * Registers the suite's hooks (call it in a describe): the server starts on `hooks` (memory-kv.ts)
 * and each test gets the namespace `<namespacePrefix>-<n>`. A hook of the suite's own that must
 * run before the namespace is created (resetting `hooks`) is registered before this call.
 */
export function inProcessApiSuite(namespacePrefix: string, hooks: MemoryKvHooks = {}): InProcessApiSuite {
  let api: InProcessApi | undefined;
  let namespace = '';
  let tests = 0;

  before(async () => {
    api = await InProcessApi.start(hooks);
  });

  after(async () => {
    await api?.stop();
  });

  beforeEach(async () => {
    namespace = `${namespacePrefix}-${++tests}`;
    const created = await started().request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } } });
    if (created.status !== 201) throw new Error(`creating the test's namespace ${namespace} answered ${created.status}: ${created.text}`);
  });

  function started(): InProcessApi {
    if (api === undefined) throw new Error('the in-process API server has not started (inProcessApiSuite is called inside a describe)');
    return api;
  }

  return {
    get api() {
      return started();
    },
    get namespace() {
      return namespace;
    },
    get configMaps() {
      return `/api/v1/namespaces/${namespace}/configmaps`;
    },
  };
}
