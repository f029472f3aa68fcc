/**
 * The connect subresources end to end (issue 31): a kubelet stand-in with its own serving
 * certificate, in a network namespace this file makes (Carina refuses loopback destinations),
 * reached by the real kubectl 1.32 through one replica and through HAProxy, and by
 * @kubernetes/client-node's Exec and Log over WebSocket.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import tls from 'node:tls';
import { PassThrough, Writable } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { createClusterCa, issueServingCertificate } from '../../src/certificates';
import { haproxyConfig } from '../../src/cluster';
import { distinctFreePorts } from '../support/etcd-process';
import { CarinaApiProcess, type CommandResult } from '../support/carina-api-process';
import { NodeNetwork, nodeNetworkUnavailable } from '../support/stand-ins/node-network';
import { until, untilSettled } from '../support/until';
import { TestAdmissionWebhook } from '../support/admission-webhook-server';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const KUBELET_PORT = 10250;
const LEGACY_KUBELET_PORT = 10251;
const ROGUE_KUBELET_PORT = 10252;
const CLOSED_PORT = 10259;
const SILENT_PORT = 10258;

describe('connect subresources: logs, exec, attach, cp, port-forward and proxies through Carina (e2e)', function () {
  this.timeout(120_000);
  let network: NodeNetwork;
  let server: CarinaApiProcess;
  let kubelet: { output: () => string; stop(): void };
  let dir: string;
  const cleanup = () => network?.remove();

  const kubectl = (args: string[], options: { input?: string; timeoutMs?: number } = {}): Promise<CommandResult> => server.kubectl(args, options);
  const apply = async (object: Obj, path: string): Promise<void> => {
    const created = await server.request('POST', path, { body: JSON.stringify(object), headers: { 'Content-Type': 'application/json' } });
    expect(created.status, created.text).to.equal(201);
  };
  const patchStatus = async (path: string, status: Obj): Promise<void> => {
    const patched = await server.request('PATCH', `${path}/status`, { body: JSON.stringify({ status }), headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(patched.status, patched.text).to.equal(200);
  };
  const node = async (name: string, address: string, port: number) => {
    await apply({ apiVersion: 'v1', kind: 'Node', metadata: { name } }, '/api/v1/nodes');
    await patchStatus(`/api/v1/nodes/${name}`, { addresses: [{ type: 'InternalIP', address }], daemonEndpoints: { kubeletEndpoint: { Port: port } } });
  };
  const pod = async (name: string, nodeName: string | undefined, containers: string[], podIp?: string) => {
    await apply({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { ...(nodeName === undefined ? {} : { nodeName }), containers: containers.map((c, i) => ({ name: c, image: 'busybox', ...(i === 0 ? { ports: [{ containerPort: 8080 }] } : {}) })) } }, '/api/v1/namespaces/default/pods');
    if (podIp !== undefined) await patchStatus(`/api/v1/namespaces/default/pods/${name}`, { phase: 'Running', podIP: podIp, podIPs: [{ ip: podIp }] });
  };
  const kubeletRequests = () => kubelet.output().split('\n').filter((l) => l.startsWith('request '));

  before(async function () {
    const unavailable = nodeNetworkUnavailable();
    if (unavailable !== undefined) throw new Error(`these tests need network namespaces: ${unavailable}`);
    process.once('exit', cleanup);
    dir = mkdtempSync(join(tmpdir(), 'carina-connect-'));
    network = await NodeNetwork.create();
    const kubeletCa = await createClusterCa();
    const otherCa = await createClusterCa();
    const serving = await issueServingCertificate(kubeletCa, { ipAddresses: [network.address] });
    const rogue = await issueServingCertificate(otherCa, { ipAddresses: [network.address] });
    writeFileSync(join(dir, 'kubelet-ca.crt'), kubeletCa.certPem);
    writeFileSync(join(dir, 'audit-policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources:\n  - group: ""\n    resources: ["pods/exec", "pods/log", "pods/portforward"]\n- level: None\n');
    server = await CarinaApiProcess.start({ extraArgs: ['--kubelet-certificate-authority', join(dir, 'kubelet-ca.crt'), '--kubelet-timeout', '2s', '--audit-policy-file', join(dir, 'audit-policy.yaml'), '--audit-log-path', join(dir, 'audit.log')] });
    const [podHttpPort, echoPort, sourcePort] = [8080, 9000, 9001];
    kubelet = await network.startKubelet({
      kubeletPorts: [{ port: KUBELET_PORT }, { port: LEGACY_KUBELET_PORT, legacy: true }, { port: ROGUE_KUBELET_PORT, servingCertPem: rogue.certPem, servingKeyPem: rogue.keyPem }],
      servingCertPem: serving.certPem,
      servingKeyPem: serving.keyPem,
      clientCaPem: server.caPem,
      podHttpPort,
      podHttpsPort: 8443,
      echoPort,
      sourcePort,
      sourceBytes: 1024 * 1024,
      firehoseBytes: 1024 * 1024,
      silentPort: SILENT_PORT,
    });
    await node('modern', network.address, KUBELET_PORT);
    await node('legacy', network.address, LEGACY_KUBELET_PORT);
    await node('rogue', network.address, ROGUE_KUBELET_PORT);
    await node('closed', network.address, CLOSED_PORT);
    await node('silent', network.address, SILENT_PORT);
    await node('absent', `${network.subnet}.3`, KUBELET_PORT);
    await node('loopback', '127.0.0.1', KUBELET_PORT);
    await pod('p1', 'modern', ['c', 'restarted', 'firehose'], network.address);
    await pod('solo', 'modern', ['c'], network.address);
    await pod('old', 'legacy', ['c'], network.address);
    await pod('pending', undefined, ['c']);
    await pod('on-rogue', 'rogue', ['c'], network.address);
    await pod('on-closed', 'closed', ['c'], network.address);
    await pod('on-silent', 'silent', ['c'], network.address);
    await pod('on-absent', 'absent', ['c'], network.address);
    await pod('local', 'modern', ['c'], '127.0.0.1');
  });

  after(async () => {
    await server?.stop();
    cleanup();
    process.off('exit', cleanup);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  describe('pods/log', () => {
    it('kubectl logs with -c, --tail, --timestamps, --since, --limit-bytes and --previous', async () => {
      const all = await kubectl(['logs', 'solo']);
      expect(all.code, all.stderr).to.equal(0);
      expect(all.stdout.trim().split('\n')).to.deep.equal(Array.from({ length: 10 }, (_, i) => `c line ${i + 1}`));
      const tail = await kubectl(['logs', 'p1', '-c', 'c', '--tail', '2']);
      expect(tail.stdout).to.equal('c line 9\nc line 10\n');
      const stamped = await kubectl(['logs', 'solo', '--tail', '1', '--timestamps']);
      expect(stamped.stdout).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z c line 10\n$/);
      const since = await kubectl(['logs', 'solo', '--since', '150s']);
      expect(since.stdout).to.equal('c line 9\nc line 10\n');
      const limited = await kubectl(['logs', 'solo', '--limit-bytes', '6']);
      expect(limited.stdout).to.equal('c line');
      const previous = await kubectl(['logs', 'p1', '-c', 'restarted', '--previous', '--tail', '1']);
      expect(previous.stdout).to.equal('restarted previous line 10\n');
      const noPrevious = await kubectl(['logs', 'solo', '--previous']);
      expect(noPrevious.code).to.not.equal(0);
      expect(noPrevious.stderr).to.include('previous terminated container "c" in pod "solo" not found');
    });

    it('kubectl logs -f streams until the client leaves', async () => {
      const child = spawn('kubectl', ['--kubeconfig', server.kubeconfig, 'logs', '-f', 'solo', '--tail', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      try {
        await until('three followed lines', async () => out.includes('c follow 3'), 15_000, () => out);
        expect(out.startsWith('c line 10\n')).to.equal(true);
      } finally {
        child.kill('SIGKILL');
      }
    });

    it('a log streamed at full speed arrives whole, to kubectl (HTTP/2) and to an HTTP/1.1 client (chunked)', async () => {
      const viaKubectl = await kubectl(['logs', 'p1', '-c', 'firehose']);
      expect(viaKubectl.code, viaKubectl.stderr).to.equal(0);
      expect(viaKubectl.stdout.length).to.equal(1024 * 1024);
      expect(/^x+$/.test(viaKubectl.stdout)).to.equal(true);
      const viaHttp1 = await server.request('GET', '/api/v1/namespaces/default/pods/p1/log?container=firehose');
      expect(viaHttp1.status).to.equal(200);
      expect(viaHttp1.headers['content-type']).to.equal('text/plain');
      expect(viaHttp1.headers['transfer-encoding']).to.equal('chunked');
      expect(viaHttp1.body.equals(Buffer.alloc(1024 * 1024, 'x'))).to.equal(true);
    });

    it('answers kube\'s errors: a pod without a node (204, no content), no container named, an unknown container, an unknown pod, bad options', async () => {
      const pending = await server.request('GET', '/api/v1/namespaces/default/pods/pending/log');
      expect(pending.status).to.equal(204);
      expect(pending.text).to.equal('');
      const several = await server.request('GET', '/api/v1/namespaces/default/pods/p1/log');
      expect(several.status).to.equal(400);
      expect(several.json()).to.deep.include({ reason: 'BadRequest', message: 'a container name must be specified for pod p1, choose one of: [c restarted firehose]' });
      const unknown = await server.request('GET', '/api/v1/namespaces/default/pods/solo/log?container=nope');
      expect(unknown.json()).to.deep.include({ code: 400, message: 'container nope is not valid for pod solo' });
      const missing = await server.request('GET', '/api/v1/namespaces/default/pods/ghost/log');
      expect(missing.json()).to.deep.include({ code: 404, message: 'pods "ghost" not found' });
      const invalid = await server.request('GET', '/api/v1/namespaces/default/pods/solo/log?tailLines=-1');
      expect(invalid.json()).to.deep.include({ code: 422, reason: 'Invalid', message: 'PodLogOptions "solo" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0' });
    });

    it('presents the kubelet client certificate issued from the cluster CA, and verifies the kubelet against --kubelet-certificate-authority', async () => {
      expect(kubeletRequests().some((l) => l.startsWith('request kube-apiserver-kubelet-client GET /containerLogs/default/solo/c'))).to.equal(true);
      const rogue = await server.request('GET', '/api/v1/namespaces/default/pods/on-rogue/log');
      expect(rogue.status).to.equal(500);
      expect(rogue.json<Obj>().message).to.equal(`Get "https://${network.address}:${ROGUE_KUBELET_PORT}/containerLogs/default/on-rogue/c": x509: certificate signed by unknown authority`);
    });
  });

  describe('pods/exec and pods/attach', () => {
    it('kubectl exec over WebSocket (v5.channel.k8s.io): output, stdin, exit codes, stderr apart', async () => {
      const echo = await kubectl(['exec', 'solo', '--', 'echo', 'hello', 'world']);
      expect(echo.code, echo.stderr).to.equal(0);
      expect(echo.stdout).to.equal('hello world\n');
      const cat = await kubectl(['exec', '-i', 'solo', '--', 'cat'], { input: 'from stdin\n' });
      expect(cat.stdout).to.equal('from stdin\n');
      const failing = await kubectl(['exec', 'solo', '--', 'sh', '-c', 'exit 3']);
      expect(failing.code).to.equal(3);
      const split = await kubectl(['exec', 'solo', '--', 'sh', '-c', 'echo out; echo err >&2']);
      expect(split.stdout).to.equal('out\n');
      expect(split.stderr).to.include('err\n');
      expect(kubeletRequests().some((l) => l.includes('/exec/default/solo/c upgrade=websocket'))).to.equal(true);
    });

    it('kubectl exec falls back to SPDY/3.1 when the kubelet refuses v5 WebSockets (as v1.25\'s does)', async () => {
      const echo = await kubectl(['exec', 'old', '--', 'echo', 'over', 'spdy']);
      expect(echo.code, echo.stderr).to.equal(0);
      expect(echo.stdout).to.equal('over spdy\n');
      const cat = await kubectl(['exec', '-i', 'old', '--', 'cat'], { input: 'spdy stdin\n' });
      expect(cat.stdout).to.equal('spdy stdin\n');
      const failing = await kubectl(['exec', 'old', '--', 'sh', '-c', 'echo bad >&2; exit 4']);
      expect(failing.code).to.equal(4);
      expect(failing.stderr).to.include('bad\n');
      expect(kubeletRequests().some((l) => l.includes('/exec/default/old/c upgrade=SPDY/3.1'))).to.equal(true);
    });

    it('audits exec and log requests with kube\'s verbs and subresources, the exec once its session ended', async () => {
      const marker = `audit-${Date.now()}`;
      expect((await kubectl(['exec', 'solo', '--', 'echo', marker])).code).to.equal(0);
      const events = () => readFileSync(join(dir, 'audit.log'), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Obj);
      // This exec's own event (earlier tests' execs on solo are in the log too): it is written once
      // the session has ended, which may be after kubectl has exited.
      const complete = await until('the exec\'s ResponseComplete event', async () => {
        const found = events().filter((e) => e.objectRef?.subresource === 'exec' && e.objectRef?.name === 'solo' && e.stage === 'ResponseComplete' && String(e.requestURI).includes(marker));
        return found.length > 0 ? found : undefined;
      }, 10_000);
      expect(complete).to.have.length(1);
      const last = complete[0];
      // kubectl 1.32 opens the WebSocket with a GET: v1.25 names the verb by the method.
      expect(last).to.deep.include({ level: 'Metadata', verb: 'get' });
      expect(last.objectRef).to.deep.include({ resource: 'pods', namespace: 'default', name: 'solo', subresource: 'exec', apiVersion: 'v1' });
      expect(last.responseStatus.code).to.equal(101);
      expect(last.requestURI).to.include(`command=${marker}`);
      // Against a v1.25-like kubelet the WebSocket GET is refused (400, as the kubelet said) and the SPDY fallback POSTs: create.
      expect((await kubectl(['exec', 'old', '--', 'echo', marker])).code).to.equal(0);
      const attempts = await until('both exec attempts\' events', async () => {
        const found = events().filter((e) => e.objectRef?.name === 'old' && e.objectRef?.subresource === 'exec' && e.stage === 'ResponseComplete' && String(e.requestURI).includes(marker));
        return found.length === 2 ? found : undefined;
      }, 10_000);
      expect(attempts.map((e) => [e.verb, e.responseStatus.code])).to.deep.equal([['get', 400], ['create', 101]]);
      const logs = events().filter((e) => e.objectRef?.subresource === 'log' && e.stage === 'ResponseComplete');
      expect(logs.length).to.be.greaterThan(0);
      expect(logs[0]).to.deep.include({ verb: 'get' });
    });

    it('kubectl attach -i carries stdin to the container and its output back', async () => {
      const attached = await kubectl(['attach', '-i', 'solo', '-c', 'c'], { input: 'attach me\n' });
      expect(attached.code, attached.stderr).to.equal(0);
      expect(attached.stdout).to.include('attach me\n');
    });

    it('kubectl cp copies a file into the pod and back', async () => {
      const local = join(dir, 'upload.txt');
      writeFileSync(local, 'copied through carina\n'.repeat(1000));
      const up = await kubectl(['cp', local, 'default/solo:/tmp/upload.txt']);
      expect(up.code, up.stderr).to.equal(0);
      const back = join(dir, 'download.txt');
      const down = await kubectl(['cp', 'default/solo:/tmp/upload.txt', back]);
      expect(down.code, down.stderr).to.equal(0);
      expect(readFileSync(back, 'utf8')).to.equal(readFileSync(local, 'utf8'));
    });

    it('refuses a pod without a node with kube\'s 400, before dialling', async () => {
      for (const sub of ['exec?command=true', 'attach', 'portforward']) {
        const refused = await server.request('POST', `/api/v1/namespaces/default/pods/pending/${sub}`);
        expect(refused.json(), sub).to.deep.include({ code: 400, reason: 'BadRequest', message: 'pod pending does not have a host assigned' });
      }
    });

    it('an unreachable kubelet: kube\'s error dialing backend; one that never answers: given up after --kubelet-timeout', async () => {
      const closed = await kubectl(['exec', 'on-closed', '--', 'true']);
      expect(closed.code).to.not.equal(0);
      expect(closed.stderr, closed.stderr).to.include(`error dialing backend: dial tcp ${network.address}:${CLOSED_PORT}: connect: connection refused`);
      const absent = await kubectl(['exec', 'on-absent', '--', 'true']);
      // An address nobody answers ARP for: the kernel's verdict, or the deadline's, whichever comes first.
      expect(absent.stderr).to.match(new RegExp(`error dialing backend: dial tcp ${network.subnet.replace(/\./g, '\\.')}\\.3:${KUBELET_PORT}: (connect: no route to host|i/o timeout)`));
      const silent = await kubectl(['exec', 'on-silent', '--', 'true']);
      expect(silent.stderr, silent.stderr).to.include('error dialing backend: net/http: TLS handshake timeout');
    });
  });

  describe('pods/portforward', () => {
    it('kubectl port-forward carries TCP data both ways (SPDY/3.1 after the WebSocket tunnel is refused)', async () => {
      const [localEcho, localSource] = await distinctFreePorts(2);
      const child = spawn('kubectl', ['--kubeconfig', server.kubeconfig, 'port-forward', 'pod/solo', `${localEcho}:9000`, `${localSource}:9001`], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      try {
        await until('kubectl to forward', async () => out.includes(`Forwarding from 127.0.0.1:${localSource}`), 15_000, () => out);
        expect(await tcpExchange(localEcho, Buffer.from('ping through the tunnel'))).to.equal('ping through the tunnel');
        const downloaded = await tcpRead(localSource);
        expect(downloaded).to.equal(1024 * 1024);
        expect(kubeletRequests().some((l) => l.includes('/portForward/default/solo upgrade=SPDY/3.1'))).to.equal(true);
      } finally {
        child.kill('SIGKILL');
      }
    });
  });

  describe('pods/proxy, services/proxy, nodes/proxy', () => {
    it('kubectl get --raw reaches the pod, a service\'s endpoint by port name and number, and the kubelet', async () => {
      await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] } }, '/api/v1/namespaces/default/services');
      await apply({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'web' }, subsets: [{ addresses: [{ ip: network.address }], ports: [{ name: 'http', port: 8080 }] }] }, '/api/v1/namespaces/default/endpoints');
      const viaPod = await kubectl(['get', '--raw', '/api/v1/namespaces/default/pods/solo/proxy/some/path?x=1']);
      expect(viaPod.code, viaPod.stderr).to.equal(0);
      expect(parsed(viaPod)).to.deep.include({ server: 'pod', method: 'GET', url: '/some/path?x=1' });
      const withPort = await kubectl(['get', '--raw', '/api/v1/namespaces/default/pods/solo:8080/proxy/']);
      expect(parsed(withPort)).to.deep.include({ server: 'pod', url: '/' });
      const byName = await kubectl(['get', '--raw', '/api/v1/namespaces/default/services/web:http/proxy/a/b/']);
      expect(byName.code, byName.stderr).to.equal(0);
      expect(parsed(byName)).to.deep.include({ server: 'pod', url: '/a/b/' });
      const byNumber = await kubectl(['get', '--raw', '/api/v1/namespaces/default/services/web:80/proxy/n']);
      expect(parsed(byNumber)).to.deep.include({ server: 'pod', url: '/n' });
      const viaNode = await kubectl(['get', '--raw', '/api/v1/nodes/modern/proxy/metrics/cadvisor']);
      expect(viaNode.code, viaNode.stderr).to.equal(0);
      expect(parsed(viaNode)).to.deep.include({ server: 'kubelet', url: '/metrics/cadvisor' });
      const nodeOtherPort = await kubectl(['get', '--raw', '/api/v1/nodes/modern:8080/proxy/x']);
      expect(parsed(nodeOtherPort)).to.deep.include({ server: 'pod', url: '/x' });
      const posted = await server.request('POST', '/api/v1/namespaces/default/pods/solo/proxy/form', { body: 'a=1', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
      expect(posted.status).to.equal(200);
      expect(posted.json()).to.deep.include({ method: 'POST', body: 'a=1' });
      const redirected = await server.request('GET', '/api/v1/namespaces/default/pods/solo/proxy/redirect');
      expect(redirected.status).to.equal(302);
      expect(redirected.headers.location).to.equal('/api/v1/namespaces/default/pods/solo/proxy/landing?from=redirect');
      const page = await kubectl(['get', '--raw', '/api/v1/namespaces/default/services/web:http/proxy/page.html']);
      expect(page.stdout).to.equal('<html><head><link href="/api/v1/namespaces/default/services/web:http/proxy/style.css" rel="stylesheet"></head><body>' +
        '<a href="/api/v1/namespaces/default/services/web:http/proxy/next?x=1&amp;y=2">next</a><img src="other.png"></body></html>');
      const bare = await server.request('GET', '/api/v1/namespaces/default/pods/solo/proxy');
      expect(bare.status).to.equal(301);
      expect(bare.headers.location).to.equal('/api/v1/namespaces/default/pods/solo/proxy/');
    });

    it('OPTIONS reaches the pod, the service\'s endpoint and the kubelet through the proxies; other routes answer 405; only a rule for every verb allows it', async () => {
      for (const [path, server_, url] of [
        ['/api/v1/namespaces/default/pods/solo/proxy/cors?x=1', 'pod', '/cors?x=1'],
        ['/api/v1/namespaces/default/services/web:http/proxy/cors', 'pod', '/cors'],
        ['/api/v1/nodes/modern/proxy/cors', 'kubelet', '/cors'],
      ]) {
        const answer = await server.request('OPTIONS', path, { headers: { Origin: 'https://example.com', 'Access-Control-Request-Method': 'PUT' } });
        expect(answer.status, answer.text).to.equal(200);
        expect(answer.json(), path).to.deep.include({ server: server_, method: 'OPTIONS', url });
        expect(answer.json<Obj>().headers['access-control-request-method']).to.equal('PUT');
      }
      for (const path of ['/api/v1/namespaces/default/pods/solo/exec?command=true', '/api/v1/namespaces/default/pods/solo/log', '/api/v1/namespaces/default/pods', '/api/v1/namespaces/default/pods/solo']) {
        const refused = await server.request('OPTIONS', path);
        expect(refused.json(), path).to.deep.include({ code: 405, reason: 'MethodNotAllowed', message: 'the server does not allow this method on the requested resource' });
      }
      await kubectl(['create', 'serviceaccount', 'proxier']);
      await kubectl(['create', 'role', 'proxier', '--verb=get,create,update,patch,delete', '--resource=pods/proxy']);
      await kubectl(['create', 'rolebinding', 'proxier', '--role=proxier', '--serviceaccount=default:proxier']);
      const token = (await kubectl(['create', 'token', 'proxier'])).stdout.trim();
      const asProxier = { anonymous: true, headers: { Authorization: `Bearer ${token}` } };
      expect((await server.request('GET', '/api/v1/namespaces/default/pods/solo/proxy/x', asProxier)).status).to.equal(200);
      const denied = await server.request('OPTIONS', '/api/v1/namespaces/default/pods/solo/proxy/x', asProxier);
      expect(denied.json()).to.deep.include({ code: 403, message: 'pods "solo" is forbidden: User "system:serviceaccount:default:proxier" cannot  resource "pods/proxy" in API group "" in the namespace "default"' });
    });

    it('the https: scheme prefix reaches a TLS port of the pod and of a service\'s endpoint', async () => {
      await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web-tls' }, spec: { ports: [{ name: 'tls', port: 443, targetPort: 8443 }] } }, '/api/v1/namespaces/default/services');
      await apply({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'web-tls' }, subsets: [{ addresses: [{ ip: network.address }], ports: [{ name: 'tls', port: 8443 }] }] }, '/api/v1/namespaces/default/endpoints');
      const service = await kubectl(['get', '--raw', '/api/v1/namespaces/default/services/https:web-tls:tls/proxy/secure']);
      expect(service.code, service.stderr).to.equal(0);
      expect(parsed(service)).to.deep.include({ server: 'pod-tls', url: '/secure' });
      const viaPod = await kubectl(['get', '--raw', '/api/v1/namespaces/default/pods/https:solo:8443/proxy/p']);
      expect(parsed(viaPod)).to.deep.include({ server: 'pod-tls', url: '/p' });
      // Plain HTTP to the TLS port: the pod's server hangs up, which kube's proxy transport reports as a 503.
      const plain = await server.request('GET', '/api/v1/namespaces/default/services/web-tls:tls/proxy/x');
      expect(plain.json()).to.deep.include({ code: 503, reason: 'ServiceUnavailable' });
      expect(plain.json<Obj>().message).to.match(/^error trying to reach service: /);
    });

    it('refuses loopback destinations for pods/proxy and nodes/proxy, and a proxy path with dots or encoded slashes', async () => {
      const pod = await server.request('GET', '/api/v1/namespaces/default/pods/local/proxy/x');
      expect(pod.json()).to.deep.include({ code: 400, message: 'address not allowed' });
      const nodeProxy = await server.request('GET', '/api/v1/nodes/loopback/proxy/x');
      expect(nodeProxy.json()).to.deep.include({ code: 400, message: 'address not allowed' });
      for (const path of ['/api/v1/namespaces/default/pods/solo/proxy/../../../secrets', '/api/v1/namespaces/default/pods/solo/proxy/a%2F..%2Fb']) {
        expect((await server.request('GET', path)).status, path).to.equal(400);
      }
    });

    it('a service without endpoints: 503 no endpoints available', async () => {
      await apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'empty' }, spec: { ports: [{ port: 80 }] } }, '/api/v1/namespaces/default/services');
      await apply({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'empty' }, subsets: [] }, '/api/v1/namespaces/default/endpoints');
      const answer = await server.request('GET', '/api/v1/namespaces/default/services/empty/proxy/');
      expect(answer.json()).to.deep.include({ code: 503, reason: 'ServiceUnavailable', message: 'no endpoints available for service "empty"' });
    });
  });

  describe('authorization, refusals and cleanup', () => {
    it('a user without pods/exec gets 403 before any connection to the kubelet is opened', async () => {
      await kubectl(['create', 'serviceaccount', 'viewer']);
      await kubectl(['create', 'rolebinding', 'viewer-view', '--clusterrole=view', '--serviceaccount=default:viewer']);
      const token = (await kubectl(['create', 'token', 'viewer'])).stdout.trim();
      const before = kubeletRequests().length;
      const denied = await server.request('POST', '/api/v1/namespaces/default/pods/solo/exec?command=true', { anonymous: true, headers: { Authorization: `Bearer ${token}` } });
      expect(denied.status).to.equal(403);
      expect(denied.json()).to.deep.include({ reason: 'Forbidden', message: 'pods "solo" is forbidden: User "system:serviceaccount:default:viewer" cannot create resource "pods/exec" in API group "" in the namespace "default"' });
      const logs = await server.request('GET', '/api/v1/namespaces/default/pods/solo/log', { anonymous: true, headers: { Authorization: `Bearer ${token}` } });
      expect(logs.status).to.equal(200);
      expect(kubeletRequests().length).to.equal(before + 1);
    });

    it('connect admission: a validating webhook for CONNECT on pods/exec sees PodExecOptions and can refuse before any dial', async () => {
      const hooks = new TestAdmissionWebhook();
      await hooks.start();
      try {
        hooks.on('/exec', (call) => TestAdmissionWebhook.response(call, (call.request.object?.command ?? []).includes('forbidden') ? { allowed: false, status: { code: 403, message: 'no forbidden commands' } } : { allowed: true }));
        await apply({
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingWebhookConfiguration',
          metadata: { name: 'exec-guard' },
          webhooks: [{ name: 'exec.guard.test', clientConfig: { caBundle: hooks.caBundle, url: hooks.url('/exec') }, rules: [{ operations: ['CONNECT'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/exec'] }], sideEffects: 'None', admissionReviewVersions: ['v1'] }],
        }, '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations');
        await until('the webhook to see an exec', async () => {
          await kubectl(['exec', 'solo', '--', 'echo', 'probe']);
          return hooks.callsTo('/exec').length > 0;
        }, 20_000);
        const seen = hooks.callsTo('/exec')[0].request;
        expect(seen).to.deep.include({ operation: 'CONNECT', name: 'solo', namespace: 'default', subResource: 'exec' });
        expect(seen.kind).to.deep.equal({ group: '', version: 'v1', kind: 'PodExecOptions' });
        expect(seen.object).to.deep.include({ kind: 'PodExecOptions', apiVersion: 'v1', stdout: true, stderr: true, command: ['echo', 'probe'] });
        const before = kubeletRequests().length;
        const refused = await kubectl(['exec', 'solo', '--', 'forbidden']);
        expect(refused.code).to.not.equal(0);
        expect(refused.stderr).to.include('no forbidden commands');
        expect(kubeletRequests().length).to.equal(before);
      } finally {
        await server.request('DELETE', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/exec-guard');
        await hooks.stop();
      }
    });

    it('an upgrade the kubelet refuses comes back as the kubelet said it', async () => {
      const answer = await rawUpgrade('/api/v1/namespaces/default/pods/solo/portforward?ports=9000', { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Protocol': 'SPDY/3.1+portforward.k8s.io' });
      expect(answer.split('\r\n')[0]).to.equal('HTTP/1.1 400 Bad Request');
      expect(answer).to.include('port forwarding over WebSocket is not supported');
    });

    it('100 exec sessions cut by their clients mid-stream leave no connection to the kubelet open', async () => {
      const established = () => kubeletConnections();
      const baseline = await established();
      for (let i = 0; i < 100; i++) {
        const socket = await openExecSession('/api/v1/namespaces/default/pods/solo/exec?command=cat&stdin=true&stdout=true');
        socket.destroy();
      }
      await until('the kubelet connections to close', async () => (await established()) <= baseline, 15_000, () => `baseline ${baseline}`);
    });
  });

  describe('@kubernetes/client-node', () => {
    const kubeConfig = () => {
      const config = new k8s.KubeConfig();
      config.loadFromFile(server.kubeconfig);
      return config;
    };

    it('Exec over WebSocket: output, stderr and the exit status', async () => {
      const stdout = collector();
      const stderr = collector();
      const status = await new Promise<k8s.V1Status>((resolve, reject) => {
        new k8s.Exec(kubeConfig()).exec('default', 'solo', 'c', ['sh', '-c', 'echo to-out; echo to-err >&2; exit 5'], stdout.stream, stderr.stream, null, false, resolve).catch(reject);
      });
      expect(stdout.text()).to.equal('to-out\n');
      expect(stderr.text()).to.equal('to-err\n');
      expect(status.status).to.equal('Failure');
      expect(status.details?.causes?.[0]).to.deep.include({ reason: 'ExitCode', message: '5' });
      const stdin = new PassThrough();
      const echoed = collector();
      const session = await new k8s.Exec(kubeConfig()).exec('default', 'solo', 'c', ['cat'], echoed.stream, null, stdin, false);
      const closed = new Promise<number>((resolve) => session.once('close', resolve));
      stdin.write('typed\n');
      await until('the echo', async () => echoed.text() === 'typed\n', 10_000, echoed.text);
      // The client closes the WebSocket as soon as its stdin ends (after v5's close of stdin), so
      // cat's exit status may or may not come first: the close handshake is what always ends it.
      stdin.end();
      await untilSettled('the session to close once its stdin has', closed, 10_000);
    });

    it('Log reads the container\'s log', async () => {
      const out = collector();
      await new Promise<void>((resolve, reject) => {
        void new k8s.Log(kubeConfig()).log('default', 'solo', 'c', out.stream, (err: unknown) => (err ? reject(err as Error) : resolve()), { tailLines: 2 });
      });
      await until('the log lines', async () => out.text() === 'c line 9\nc line 10\n', 5000, out.text);
    });
  });

  describe('through HAProxy', () => {
    let haproxy: ReturnType<typeof spawn> | undefined;
    let kubeconfig: string;
    before(async () => {
      const [lbPort] = await distinctFreePorts(1);
      writeFileSync(join(dir, 'haproxy.cfg'), haproxyConfig(lbPort, [server.port]));
      haproxy = spawn('haproxy', ['-db', '-f', join(dir, 'haproxy.cfg')], { stdio: 'ignore' });
      kubeconfig = join(dir, 'via-haproxy.kubeconfig');
      writeFileSync(kubeconfig, readFileSync(server.kubeconfig, 'utf8').replace(`127.0.0.1:${server.port}`, `127.0.0.1:${lbPort}`));
      await until('HAProxy to pass requests', async () => (await viaHaproxy(['get', '--raw', '/readyz'])).stdout === 'ok', 15_000);
    });
    after(() => haproxy?.kill('SIGKILL'));
    const viaHaproxy = (args: string[], input?: string) => server.kubectl(['--kubeconfig', kubeconfig, ...args], { input });

    it('kubectl logs, exec (WebSocket and SPDY), cp and port-forward work through HAProxy', async () => {
      expect((await viaHaproxy(['logs', 'solo', '--tail', '1'])).stdout).to.equal('c line 10\n');
      expect((await viaHaproxy(['exec', '-i', 'solo', '--', 'cat'], 'through haproxy\n')).stdout).to.equal('through haproxy\n');
      expect((await viaHaproxy(['exec', '-i', 'old', '--', 'cat'], 'spdy through haproxy\n')).stdout).to.equal('spdy through haproxy\n');
      const local = join(dir, 'haproxy-upload.txt');
      writeFileSync(local, 'via haproxy\n');
      expect((await viaHaproxy(['cp', local, 'default/solo:/tmp/haproxy.txt'])).code).to.equal(0);
      expect((await viaHaproxy(['exec', 'solo', '--', 'cat', '/tmp/haproxy.txt'])).stdout).to.equal('via haproxy\n');
      const [localEcho] = await distinctFreePorts(1);
      const child = spawn('kubectl', ['--kubeconfig', kubeconfig, 'port-forward', 'pod/solo', `${localEcho}:9000`], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      try {
        await until('kubectl to forward', async () => out.includes('Forwarding from'), 15_000, () => out);
        expect(await tcpExchange(localEcho, Buffer.from('haproxy tunnel'))).to.equal('haproxy tunnel');
      } finally {
        child.kill('SIGKILL');
      }
    });
  });

  function parsed(result: CommandResult): Obj {
    try {
      return JSON.parse(result.stdout) as Obj;
    } catch {
      throw new Error(`not JSON: ${result.stdout} ${result.stderr}`);
    }
  }

  /** Sends `data` to a local port and reads the same number of bytes back. */
  function tcpExchange(port: number, data: Buffer): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(data));
      let got = Buffer.alloc(0);
      socket.on('data', (d: Buffer) => {
        got = Buffer.concat([got, d]);
        if (got.length >= data.length) {
          socket.destroy();
          resolve(got.toString());
        }
      });
      socket.on('error', reject);
    });
  }

  /** Reads a local port until it closes; resolves with the byte count. */
  function tcpRead(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      let count = 0;
      const socket = net.connect(port, '127.0.0.1');
      socket.on('data', (d: Buffer) => (count += d.length));
      socket.on('end', () => resolve(count));
      socket.on('error', reject);
    });
  }

  function collector(): { stream: Writable; text(): string } {
    let text = '';
    return { stream: new Writable({ write(chunk: Buffer, _encoding, callback) { text += chunk.toString(); callback(); } }), text: () => text };
  }

  /** An HTTP/1.1 upgrade request with the admin certificate; resolves with what came back before the server closed or 2 s passed. */
  function rawUpgrade(path: string, headers: Record<string, string>): Promise<string> {
    const credentials = adminTls();
    return new Promise((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: server.port, ...credentials, ALPNProtocols: ['http/1.1'] }, () => {
        socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`);
      });
      let answer = '';
      socket.on('data', (d: Buffer) => (answer += d.toString()));
      socket.on('close', () => resolve(answer));
      socket.on('error', reject);
      setTimeout(() => socket.destroy(), 2000).unref();
    });
  }

  /** An exec session over WebSocket, its 101 received; the caller cuts it. */
  function openExecSession(path: string): Promise<tls.TLSSocket> {
    const credentials = adminTls();
    return new Promise((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: server.port, ...credentials, ALPNProtocols: ['http/1.1'] }, () => {
        socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n`);
      });
      let answer = '';
      socket.on('data', (d: Buffer) => {
        answer += d.toString('latin1');
        if (answer.includes('\r\n\r\n')) {
          if (answer.startsWith('HTTP/1.1 101')) resolve(socket);
          else reject(new Error(answer));
        }
      });
      socket.on('error', reject);
    });
  }

  function adminTls(): { ca: string; cert: string; key: string } {
    const text = readFileSync(server.kubeconfig, 'utf8');
    const field = (name: string) => Buffer.from(new RegExp(`${name}: (\\S+)`).exec(text)?.[1] ?? '', 'base64').toString();
    return { ca: field('certificate-authority-data'), cert: field('client-certificate-data'), key: field('client-key-data') };
  }

  /** Connections established to the kubelet's port inside the namespace. */
  async function kubeletConnections(): Promise<number> {
    const result = await new Promise<string>((resolve) => {
      const child = spawn('ip', ['netns', 'exec', network.namespace, 'ss', '-Htn', 'state', 'established', `( sport = :${KUBELET_PORT} )`], { stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.on('close', () => resolve(out));
    });
    return result.split('\n').filter((l) => l.trim() !== '').length;
  }
});
