/**
 * Hostile request bodies and headers against one `carina server` over HTTPS: each is answered as
 * kube-apiserver answers it (a 400, 413 or 431 with its body), nothing is stored, and the replica
 * keeps serving others meanwhile.
 */
import { expect } from 'chai';
import http2 from 'node:http2';
import https from 'node:https';
import { CarinaApiProcess } from '../../support/carina-api-process';
import { HaproxyProcess } from '../../support/haproxy-process';
import { until } from '../../support/until';

type Obj = Record<string, any>;

const CM = '/api/v1/namespaces/default/configmaps';
const YAML_HEADERS = { 'Content-Type': 'application/yaml' };

/** A ConfigMap whose data holds a billion-laughs bomb: nine levels of nine aliases. */
function aliasBomb(name: string): string {
  let text = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n`;
  for (let level = 1; level < 9; level++) text += `  a${level}: &a${level} [${Array(9).fill(`*a${level - 1}`).join(',')}]\n`;
  return text;
}

/** A POST whose `sent` settles once its body is written out, and `answered` with its status. */
function postOnceSent(server: CarinaApiProcess, path: string, body: string, headers: Record<string, string>): { sent: Promise<void>; answered: Promise<{ status: number }> } {
  const credentials = server.clientCredentials();
  let sent!: () => void;
  const sentPromise = new Promise<void>((resolve) => (sent = resolve));
  const answered = new Promise<{ status: number }>((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: server.port, method: 'POST', path, ...credentials, headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.on('error', reject);
    req.end(body, () => sent());
  });
  return { sent: sentPromise, answered };
}

/**
 * A POST of `body` written in full before the answer is read, as Go's and Node's clients write
 * it; `chunked`: without a Content-Length. Over HTTP/1.1 with `Connection: close` (Node's
 * client without an agent), or HTTP/2.
 */
function postWhole(port: number, server: CarinaApiProcess, protocol: 'http1' | 'http2', body: Buffer, chunked: boolean): Promise<{ status: number; body: string; errors: string[] }> {
  const path = '/api/v1/namespaces/default/configmaps';
  const contentType = 'application/vnd.kubernetes.protobuf';
  return new Promise((resolve, reject) => {
    if (protocol === 'http1') {
      const headers: Record<string, string> = { 'Content-Type': contentType, Accept: 'application/json' };
      if (!chunked) headers['Content-Length'] = String(body.length);
      // Settled once the connection is closed, with what went wrong on it: a server that closes
      // with the upload still coming resets the connection (EPIPE, ECONNRESET), before or after
      // its answer, and a proxy in between may then drop the answer.
      const errors: string[] = [];
      let answer: { status: number; body: string } | undefined;
      const req = https.request({ host: '127.0.0.1', port, method: 'POST', path, ...server.clientCredentials(), headers, agent: false }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => (answer = { status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', (err: Error & { code?: string }) => errors.push(err.code ?? err.message));
      req.on('close', () => (answer === undefined ? reject(new Error(`no answer: ${errors.join(', ')}`)) : resolve({ ...answer, errors })));
      req.end(body);
      return;
    }
    const session = http2.connect(`https://127.0.0.1:${port}`, server.clientCredentials());
    session.on('error', reject);
    const req = session.request({ ':method': 'POST', ':path': path, 'content-type': contentType, accept: 'application/json', ...(chunked ? {} : { 'content-length': String(body.length) }) });
    req.on('response', (headers) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString()));
      req.on('end', () => {
        session.close();
        resolve({ status: Number(headers[':status']), body: text, errors: [] });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** One GET over HTTP/1.1 with extra headers; the status and body, or the error that ended it. */
function getHttp1(server: CarinaApiProcess, path: string, headers: Record<string, string | string[]>): Promise<{ status: number; body: string; contentType?: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: server.port, method: 'GET', path, ...server.clientCredentials(), headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, contentType: res.headers['content-type'] }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** One GET over HTTP/2 with extra headers (repeated values of one name are sent as one HPACK-indexed field each). */
function getHttp2(server: CarinaApiProcess, path: string, headers: Record<string, string | string[]>): Promise<{ status: number; body: string; contentType?: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(server.url, { ...server.clientCredentials(), maxSendHeaderBlockLength: 16 * 1024 * 1024 });
    session.on('error', reject);
    const req = session.request({ ':path': path, ...headers });
    req.on('response', (response) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        session.close();
        resolve({ status: Number(response[':status']), body, contentType: response['content-type'] as string | undefined });
      });
    });
    req.on('error', (err) => {
      session.close();
      reject(err);
    });
  });
}

describe('hostile bodies and headers (one carina server)', function () {
  this.timeout(120_000);
  let server: CarinaApiProcess;

  before(async () => {
    server = await CarinaApiProcess.start();
  });

  after(async () => {
    await server?.stop();
  });

  describe('YAML bodies', () => {
    it('refuses a billion-laughs alias bomb with a 400 in yaml.v2\'s words and stores nothing', async () => {
      const created = await server.request('POST', CM, { body: aliasBomb('laughs'), headers: YAML_HEADERS });
      expect(created.status).to.equal(400);
      expect(created.json<Obj>()).to.deep.include({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400, message: 'error converting YAML to JSON: yaml: document contains excessive aliasing' });
      const applied = await server.request('PATCH', `${CM}/laughs?fieldManager=test`, { body: aliasBomb('laughs'), headers: { 'Content-Type': 'application/apply-patch+yaml' } });
      expect(applied.status).to.equal(400);
      expect(applied.json<Obj>().message).to.equal('error decoding YAML: error converting YAML to JSON: yaml: document contains excessive aliasing');
      expect((await server.request('GET', `${CM}/laughs`)).status).to.equal(404);
    });

    it('refuses a body nested deeper than a JSON body may be with the same 400', async () => {
      const yaml = await server.request('POST', CM, { body: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\n  labels: ${'['.repeat(3_000_000)}`, headers: YAML_HEADERS });
      const json = await server.request('POST', CM, { body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep","labels":${'['.repeat(1500)}${']'.repeat(1500)}}}` });
      expect(yaml.status).to.equal(400);
      expect(yaml.json<Obj>().message).to.equal('the request body nests more than 1000 levels deep');
      expect(yaml.json<Obj>().message).to.equal(json.json<Obj>().message);
      expect((await server.request('GET', `${CM}/deep`)).status).to.equal(404);
    });

    it('keeps serving other requests while a large YAML body decodes', async () => {
      // 3 MiB of one-digit items: seconds of parsing, which once held the replica's only thread.
      const items = Array(1_500_000).fill('1').join(',');
      const body = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tiny-nodes\n  annotations:\n    a: [${items}]\n`;
      const order: string[] = [];
      const post = postOnceSent(server, CM, body, YAML_HEADERS);
      const created = post.answered.then((result) => {
        order.push('yaml');
        return result;
      });
      await post.sent;
      // Asked once the whole body is on the wire: the server is decoding it (for seconds) meanwhile.
      const got = await server.request('GET', '/api/v1/namespaces/default');
      order.push('get');
      expect(got.status).to.equal(200);
      // The body parses (as in kube) and then fails the ConfigMap's type: annotations are strings.
      expect((await created).status).to.equal(400);
      expect(order).to.deep.equal(['get', 'yaml']);
    });
  });

  describe('request headers (kube-apiserver: Go\'s 1 MiB MaxHeaderBytes)', () => {
    it('serves 130 header fields over HTTP/2, as kubectl sends one per --as-group', async () => {
      const groups = Array.from({ length: 130 }, (_, i) => `group-${i}`);
      const answered = await getHttp2(server, '/version', { 'x-many': groups });
      expect(answered.status).to.equal(200);
      // kubectl speaks HTTP/2 to the server (ALPN); impersonated groups may read /version.
      const kubectl = await server.kubectl(['--as=alice', ...groups.map((g) => `--as-group=${g}`), 'get', '--raw', '/version']);
      expect(kubectl.code, kubectl.stderr).to.equal(0);
      expect((JSON.parse(kubectl.stdout) as Obj).major).to.equal('1');
    });

    it('serves a header list just under the limit over HTTP/2 and answers Go\'s 431 just over it', async () => {
      // Fields of 2,935 HPACK bytes (name + value + 32), repeated: indexed, they cost the wire a
      // few bytes each but count in full; 357 of them and the pseudo-headers stay under 1 MiB + 320.
      const value = 'v'.repeat(2900);
      expect((await getHttp2(server, '/version', { 'x-a': Array(357).fill(value) })).status).to.equal(200);
      const refused = await getHttp2(server, '/version', { 'x-a': Array(358).fill(value) });
      expect(refused).to.deep.equal({ status: 431, body: '<h1>HTTP Error 431</h1><p>Request Header Field(s) Too Large</p>', contentType: 'text/html; charset=utf-8' });
    });

    it('serves 1 MiB of headers over HTTP/1.1 and answers Go\'s 431 at once past its 4 KiB of slack', async () => {
      const served = await getHttp1(server, '/version', { 'x-big': 'v'.repeat(1024 * 1024) });
      expect(served.status).to.equal(200);
      const refused = await getHttp1(server, '/version', { 'x-big': 'v'.repeat(1024 * 1024 + 4096 + 1) });
      expect(refused).to.deep.equal({ status: 431, body: '431 Request Header Fields Too Large', contentType: 'text/plain; charset=utf-8' });
    });
  });

  describe('a body over the 3 MiB limit through HAProxy (TCP mode, as deploy/haproxy)', () => {
    let proxy: HaproxyProcess | undefined;

    before(async () => {
      proxy = await HaproxyProcess.start([server.port]);
      // HAProxy's first /readyz check passes in about a second; until then it may refuse.
      await until('a request through HAProxy', async () => (await postWhole(proxy?.port ?? 0, server, 'http2', Buffer.from('x'), false)).status === 400);
    });

    after(async () => {
      await proxy?.stop();
    });

    const limitStatus = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Request entity too large: limit is 3145728', reason: 'RequestEntityTooLarge', code: 413 };
    for (const protocol of ['http1', 'http2'] as const) {
      for (const chunked of [false, true]) {
        it(`answers a 4 MiB Protobuf body with kube's 413 (${protocol}, ${chunked ? 'chunked' : 'Content-Length'}), directly and through HAProxy`, async () => {
          const body = Buffer.alloc(4 * 1024 * 1024, 7);
          for (const port of [server.port, proxy?.port ?? 0]) {
            const answered = await postWhole(port, server, protocol, body, chunked);
            expect(answered.status, `port ${port}`).to.equal(413);
            expect(answered.errors, `port ${port}`).to.deep.equal([]);
            expect(JSON.parse(answered.body)).to.deep.equal(limitStatus);
          }
        });
      }
    }
  });
});

