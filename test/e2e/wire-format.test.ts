/**
 * What Kubernetes' kubectl command tests (test/cmd) see of response bodies and watches, with the
 * real curl and kubectl 1.32 against a running `carina server`: curl gets indented JSON because
 * of its User-Agent (v1.25's isPrettyPrint), in Go's field order; a client that is not a
 * browser or a command-line HTTP tool gets compact JSON; watch events are never indented. And
 * `kubectl get pods --watch --request-timeout=1`: the request's `timeout` does not shorten a
 * watch, so kubectl's own timeout ends it, which kubectl takes as the end of the watch (exit 0),
 * saying at -v=5 that the body could not be read past its Client.Timeout.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { inGoOrder } from '../../src/apis/field-order';
import { CarinaApiProcess } from '../support/carina-api-process';

type Obj = Record<string, any>;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[]): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout, stderr }));
  });
}

describe('curl and kubectl see kube-apiserver v1.25\'s bodies and watches', function () {
  this.timeout(120_000);
  let server: CarinaApiProcess;

  /** curl with the admin certificate and its own User-Agent unless `args` sets one. */
  const curl = async (path: string, ...args: string[]): Promise<string> => {
    const pki = join(server.dataDir, 'pki');
    const result = await run('curl', ['-sS', '--cacert', join(pki, 'ca.crt'), '--cert', join(pki, 'admin.crt'), '--key', join(pki, 'admin.key'), ...args, `${server.url}${path}`]);
    expect(result.code, result.stderr).to.equal(0);
    return result.stdout;
  };

  before(async () => {
    server = await CarinaApiProcess.start();
    const created = await server.kubectl(['create', 'configmap', 'shown', '--from-literal=zeta=1', '--from-literal=alpha=2']);
    expect(created.code, created.stderr).to.equal(0);
    const pod = await server.kubectl(['run', 'watched', '--image=busybox', '--labels=b=1,a=2']);
    expect(pod.code, pod.stderr).to.equal(0);
  });

  after(async () => {
    await server?.stop();
  });

  it('gives curl indented JSON (two spaces, no final newline) in Go\'s field order, for objects, lists and Status bodies', async () => {
    for (const path of ['/api/v1/namespaces/default/configmaps/shown', '/api/v1/namespaces/default/configmaps', '/api/v1/namespaces/default/pods/watched', '/api/v1/namespaces/default/configmaps/absent']) {
      const body = await curl(path);
      const parsed = JSON.parse(body) as Obj;
      expect(body, path).to.equal(JSON.stringify(inGoOrder(parsed), null, 2));
    }
    expect(await curl('/api/v1/namespaces/default/configmaps/shown')).to.match(/^\{\n {2}"kind": "ConfigMap",\n {2}"apiVersion": "v1",\n {2}"metadata": \{\n {4}"name": "shown",\n {4}"namespace": "default",\n {4}"uid": "[^"]+",\n {4}"resourceVersion": "\d+",/);
    expect(await curl('/api/v1/namespaces/default/configmaps/absent')).to.match(/^\{\n {2}"kind": "Status",\n {2}"apiVersion": "v1",\n {2}"metadata": \{\},\n {2}"status": "Failure",/);
  });

  it('gives other clients compact JSON, and curl too when the query says pretty=false', async () => {
    for (const args of [['-A', 'kubectl/v1.32.0 (linux/amd64) kubernetes/unknown'], ['-A', '']]) {
      const body = await curl('/api/v1/namespaces/default/configmaps/shown', ...args);
      expect(body, args.join(' ')).to.equal(`${JSON.stringify(inGoOrder(JSON.parse(body) as Obj))}\n`);
    }
    const body = await curl('/api/v1/namespaces/default/configmaps/shown?pretty=false');
    expect(body).to.equal(`${JSON.stringify(JSON.parse(body))}\n`);
    for (const agent of ['Wget/1.21', 'Mozilla/5.0 (X11; Linux x86_64)']) {
      const pretty = await curl('/api/v1/namespaces/default/configmaps/shown', '-A', agent);
      expect(pretty, agent).to.equal(JSON.stringify(JSON.parse(pretty), null, 2));
    }
  });

  it('never indents watch events, even for curl', async () => {
    const body = await curl('/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1');
    const lines = body.split('\n').filter((line) => line !== '');
    expect(lines.length).to.be.greaterThan(0);
    for (const line of lines) {
      const event = JSON.parse(line) as { type: string; object: Obj };
      expect(line).to.equal(JSON.stringify({ type: event.type, object: inGoOrder(event.object) }));
    }
  });

  it('kubectl get pods --watch --request-timeout=1: the watch outlives the request timeout, kubectl ends it and exits 0', async () => {
    const watched = await server.kubectl(['get', 'pods', '--watch', '--request-timeout=1'], { timeoutMs: 20_000 });
    expect(watched.code, watched.stderr).to.equal(0);
    expect(watched.stdout).to.match(/^watched\s+0\/1\s+Pending/m);
    expect(watched.stderr).to.equal('');
    // What kube's test/cmd looks at with --v=5 and up: the watch asked with timeout=1s, and kubectl's
    // own client timeout ended the body (Go 1.23's net/http says "Client.Timeout or context
    // cancellation while reading body", or the context's "deadline exceeded", whichever fires first).
    const verbose = await server.kubectl(['get', 'pod', 'watched', '--request-timeout=1', '--watch', '--v=6'], { timeoutMs: 20_000 });
    expect(verbose.code, verbose.stderr).to.equal(0);
    expect(verbose.stderr).to.match(/GET https:\/\/\S+\/pods\?fieldSelector=metadata\.name%3Dwatched&resourceVersion=\d+&timeout=1s&watch=true 200 OK/);
    expect(verbose.stderr).to.match(/Unable to decode an event from the watch stream: .*(Client\.Timeout|context deadline exceeded)/);
  });
});
