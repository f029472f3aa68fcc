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
import { createClusterCa, issueServingCertificate } from '../../src/certificates';
import { CarinaApiProcess, type CommandResult } from '../support/carina-api-process';
import { NodeNetwork, nodeNetworkUnavailable } from '../support/stand-ins/node-network';
import { until } from '../support/until';

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
    server = await CarinaApiProcess.start({ extraArgs: ['--kubelet-certificate-authority', join(dir, 'kubelet-ca.crt'), '--kubelet-timeout', '2s'] });
    const [podHttpPort, echoPort, sourcePort] = [8080, 9000, 9001];
    kubelet = await network.startKubelet({
      kubeletPorts: [{ port: KUBELET_PORT }, { port: LEGACY_KUBELET_PORT, legacy: true }, { port: ROGUE_KUBELET_PORT, servingCertPem: rogue.certPem, servingKeyPem: rogue.keyPem }],
      servingCertPem: serving.certPem,
      servingKeyPem: serving.keyPem,
      clientCaPem: server.caPem,
      podHttpPort,
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
});
