/**
 * kube's rewriting proxy transport (apimachinery util/proxy/transport.go): which links and
 * redirects are put under the proxy's path and how Go prints them, the X-Forwarded-* headers,
 * and proxied text/html bodies (plain, gzip, deflate) against other types and redirects.
 */
import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import { once } from 'node:events';
import { proxyRequest, rewriteProxiedUrl, type LinkRewriting, type ProxyResponseSink } from '../../../../src/proxy';

const prefix = '/api/v1/namespaces/ns/pods/web/proxy';
const connect: LinkRewriting = { scheme: '', host: '', pathPrepend: prefix, backendHost: '10.0.0.2:8080', requestHost: 'carina:6443' };
const aggregator: LinkRewriting = { scheme: 'https', host: '10.0.0.9:443', pathPrepend: '', backendHost: '10.0.0.9:443', requestHost: '10.0.0.9:443' };

describe('proxy: links and redirects under the proxy path (rewriteURL)', () => {
  const cases: Array<[string, string, LinkRewriting, string]> = [
    ['an absolute path, with its query and fragment', '/login?next=1#top', connect, `${prefix}/login?next=1#top`],
    ['the backend\'s own URL, keeping a trailing slash', 'http://10.0.0.2:8080/a/', connect, `${prefix}/a/`],
    ['a scheme-relative URL to the backend', '//10.0.0.2:8080/x', connect, `${prefix}/x`],
    ['a URL naming the host the client asked, which keeps its scheme and host', 'https://carina:6443/x', connect, `https://carina:6443${prefix}/x`],
    ['a path already under the prefix', `${prefix}/already`, connect, `${prefix}/already`],
    ['the root', '/', connect, `${prefix}/`],
    ['a path with dot segments, cleaned as path.Join cleans', '/a/../b/./c', connect, `${prefix}/b/c`],
    ['a path with escapes, printed with Go\'s escaping', '/a%20b/(c)', connect, `${prefix}/a%20b/%28c%29`],
    ['the aggregator: the endpoint\'s scheme and host, the path as it was', '/apis/metrics.k8s.io/v1beta1/(x)', aggregator, 'https://10.0.0.9:443/apis/metrics.k8s.io/v1beta1/(x)'],
  ];
  for (const [title, target, rewriting, expected] of cases) it(`rewrites ${title}`, () => expect(rewriteProxiedUrl(target, rewriting)).to.equal(expected));

  for (const target of ['next/page', '?q=1', '#frag', 'https://example.com/x', 'mailto:someone@example.com', 'javascript:void(0)', '/a%zz', 'http://10.0.0.2:bad/x']) {
    it(`leaves ${target} as it is`, () => expect(rewriteProxiedUrl(target, connect)).to.equal(target));
  }
});

function recordingSink(): ProxyResponseSink & { status: number; headers: Record<string, string | string[]>; body: Buffer[]; ended: boolean } {
  const sink = {
    status: 0,
    headers: {} as Record<string, string | string[]>,
    body: [] as Buffer[],
    ended: false,
    start(_contentType: string, status: number, headers: Record<string, string | string[]>) {
      sink.status = status;
      sink.headers = headers;
    },
    write(chunk: Buffer) {
      sink.body.push(chunk);
      return true;
    },
    drained: async () => undefined,
    end() {
      sink.ended = true;
    },
    onClose() {
      return undefined;
    },
  };
  return sink;
}

describe('proxy: the rewriting transport on a proxied request', () => {
  let server: http.Server;
  let port: number;
  let seen: http.IncomingHttpHeaders = {};
  const page = '<html><body><a href="/next">n</a><img src="http://10.0.0.2:8080/i.png"></body></html>';

  before(async () => {
    server = http.createServer((req, res) => {
      seen = req.headers;
      const url = req.url ?? '';
      if (url === '/html') return void res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page);
      if (url === '/gzip') return void res.writeHead(200, { 'Content-Type': 'text/html', 'Content-Encoding': 'gzip' }).end(zlib.gzipSync(page));
      if (url === '/deflate') return void res.writeHead(200, { 'Content-Type': 'text/html', 'Content-Encoding': 'deflate' }).end(zlib.deflateRawSync(page));
      if (url === '/brotli') return void res.writeHead(200, { 'Content-Type': 'text/html', 'Content-Encoding': 'br' }).end(zlib.brotliCompressSync(page));
      if (url === '/plain') return void res.writeHead(200, { 'Content-Type': 'text/plain' }).end(page);
      if (url === '/xhtml') return void res.writeHead(200, { 'Content-Type': 'application/xhtml+xml' }).end(page);
      res.writeHead(302, { 'Content-Type': 'text/html', Location: '/moved' }).end(page);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as net.AddressInfo).port;
  });
  after(() => server.close());

  const fetch = async (path: string, rewriting: LinkRewriting = connect) => {
    const sink = recordingSink();
    await proxyRequest({ method: 'GET', target: new URL(`http://127.0.0.1:${port}${path}`), headers: { 'x-forwarded-host': 'from-client' }, transport: { timeoutMs: 2000 }, rewriting }, sink);
    return { sink, body: Buffer.concat(sink.body) };
  };
  const rewrittenPage = `<html><body><a href="${prefix}/next">n</a><img src="${prefix}/i.png"></body></html>`;

  it('rewrites the links of a text/html body; the backend gets X-Forwarded-Uri, and no X-Forwarded-Host of Carina\'s own', async () => {
    const { sink, body } = await fetch('/html');
    expect(body.toString()).to.equal(rewrittenPage);
    expect(sink.headers).to.not.have.property('content-length');
    expect(seen['x-forwarded-uri']).to.equal(`${prefix}/html`);
    expect(seen['x-forwarded-host']).to.equal('from-client');
    expect(seen).to.not.have.property('x-forwarded-proto');
  });

  it('decodes gzip and deflate bodies and encodes them again; another encoding passes untouched', async () => {
    expect(zlib.gunzipSync((await fetch('/gzip')).body).toString()).to.equal(rewrittenPage);
    expect(zlib.inflateRawSync((await fetch('/deflate')).body).toString()).to.equal(rewrittenPage);
    expect(zlib.brotliDecompressSync((await fetch('/brotli')).body).toString()).to.equal(page);
  });

  it('leaves other content types and a redirect\'s body alone, rewriting the redirect\'s Location', async () => {
    expect((await fetch('/plain')).body.toString()).to.equal(page);
    expect((await fetch('/xhtml')).body.toString()).to.equal(page);
    const redirect = await fetch('/redirect');
    expect(redirect.sink.headers.location).to.equal(`${prefix}/moved`);
    expect(redirect.body.toString()).to.equal(page);
  });

  it('the aggregator\'s transport names the endpoint in X-Forwarded-Host and -Proto and in the links', async () => {
    const { body } = await fetch('/html', aggregator);
    expect(seen['x-forwarded-host']).to.equal('10.0.0.9:443');
    expect(seen['x-forwarded-proto']).to.equal('https');
    expect(seen['x-forwarded-uri']).to.equal('/html');
    // The image names another host than the endpoint: it stays.
    expect(body.toString()).to.equal(page.replace('"/next"', '"https://10.0.0.9:443/next"'));
  });
});
