/**
 * How the etcd client reports a call or stream that a server ends without an answer: the unary
 * call (grpc-channel.ts), Snapshot and Watch (etcd-client.ts) read the end of their stream the
 * same way (onStreamEnd). A bare HTTP/2 server on loopback answers as a broken or hostile etcd
 * would: a status in the trailers or in a trailers-only response, a non-gRPC HTTP status, a reset.
 */
import { expect } from 'chai';
import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { EtcdClient } from '../../../../raft/etcd/etcd-client';
import { GRPC_CONTENT_TYPE, Status } from '../../../../raft/etcd/grpc-framing';
import { KvError } from '../../../../raft/kv/errors';
import { untilSettled } from '../../../support/until';

const { NGHTTP2_CANCEL, NGHTTP2_INTERNAL_ERROR, NGHTTP2_NO_ERROR } = http2.constants;

/** What the server does with each stream it is sent. */
type Answer = (stream: http2.ServerHttp2Stream) => void;

const grpcHead = { ':status': 200, 'content-type': GRPC_CONTENT_TYPE };

/** Answers with the head, then ends with this status in the trailers. */
const endWithTrailers = (code: number, message: string): Answer => (stream) => {
  stream.respond(grpcHead, { waitForTrailers: true });
  stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': String(code), 'grpc-message': message }));
  stream.end();
};

function failure(promise: Promise<unknown>): Promise<KvError> {
  return untilSettled('the call to fail', promise.then(
    () => expect.fail('the call succeeded'),
    (err: unknown) => {
      expect(err).to.be.instanceOf(KvError);
      return err as KvError;
    },
  ), 10_000);
}

describe('etcd client: a call or stream the server ends without an answer', () => {
  let server: http2.Http2Server;
  let answer: Answer = () => undefined;
  let authority = '';
  let client: EtcdClient;

  before(async () => {
    server = http2.createServer();
    server.on('stream', (stream) => {
      stream.on('error', () => undefined);
      // The request's own bytes are read, so the client's end of the request is not held up.
      stream.resume();
      answer(stream);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    authority = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  beforeEach(() => {
    client = new EtcdClient({ endpoints: [`http://${authority}`], timeoutMs: 5_000 });
  });

  afterEach(async () => {
    await client.close();
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const range = () => client.range({ key: new TextEncoder().encode('k') });

  describe('a unary call', () => {
    it('fails with the status of the trailers', async () => {
      answer = endWithTrailers(Status.INVALID_ARGUMENT, 'a key is required');
      const err = await failure(range());
      expect([err.code, err.message]).to.deep.equal(['INVALID_ARGUMENT', 'a key is required']);
    });

    it('fails with the status of a trailers-only response', async () => {
      answer = (stream) => stream.respond({ ...grpcHead, 'grpc-status': String(Status.PERMISSION_DENIED), 'grpc-message': 'not yours' }, { endStream: true });
      const err = await failure(range());
      expect([err.code, err.message]).to.deep.equal(['INTERNAL', `grpc status ${Status.PERMISSION_DENIED}: not yours`]);
    });

    it('fails with the status an HTTP error without a gRPC status stands for', async () => {
      answer = (stream) => stream.respond({ ':status': 503 }, { endStream: true });
      const err = await failure(range());
      expect([err.code, err.message]).to.deep.equal(['UNAVAILABLE', 'HTTP status 503 without a gRPC status']);
    });

    it('fails as UNAVAILABLE naming the reset code of a stream reset without an error', async () => {
      answer = (stream) => stream.close(NGHTTP2_CANCEL);
      const err = await failure(range());
      expect([err.code, err.message]).to.deep.equal(['UNAVAILABLE', `/etcdserverpb.KV/Range on ${authority} failed: stream reset (code ${NGHTTP2_CANCEL})`]);
    });

    it('fails as UNAVAILABLE with the error of a stream the server reset with one', async () => {
      answer = (stream) => stream.close(NGHTTP2_INTERNAL_ERROR);
      const err = await failure(range());
      expect([err.code, err.message]).to.deep.equal(['UNAVAILABLE', `/etcdserverpb.KV/Range on ${authority} failed: Stream closed with error code NGHTTP2_INTERNAL_ERROR`]);
    });
  });

  describe('a snapshot', () => {
    const discard = () => new Writable({ write: (_chunk, _encoding, done) => done() });

    it('fails with the status of the trailers', async () => {
      answer = endWithTrailers(Status.UNAVAILABLE, 'no snapshot today');
      const err = await failure(client.snapshot(discard()));
      expect([err.code, err.message]).to.deep.equal(['UNAVAILABLE', 'no snapshot today']);
    });

    it('fails as UNAVAILABLE when the server ends it as OK before the last byte', async () => {
      answer = endWithTrailers(Status.OK, '');
      const err = await failure(client.snapshot(discard()));
      expect([err.code, err.message]).to.deep.equal(['UNAVAILABLE', `snapshot from ${authority}: the stream ended with -1 bytes still to come`]);
    });

    it('fails as UNAVAILABLE naming the reset code of a stream reset without an error', async () => {
      answer = (stream) => stream.close(NGHTTP2_CANCEL);
      const err = await failure(client.snapshot(discard()));
      expect([err.code, err.message]).to.deep.equal(['UNAVAILABLE', `snapshot from ${authority}: stream reset (code ${NGHTTP2_CANCEL})`]);
    });
  });

  describe('the watch stream', () => {
    /** Opens a watch and resolves with the error its watch is ended with. */
    const watchError = () =>
      failure(new Promise<never>((_resolve, reject) => {
        client.watch({ key: new TextEncoder().encode('k') }, () => reject(new Error('a watch response arrived')), reject);
      }));

    /**
     * Ends the stream with this status, then resets it, as grpc-go (etcd's server) does to a stream
     * whose client has not ended its side (a Watch stream never does).
     */
    const endAsEtcd = (code: number, message: string): Answer => (stream) => {
      stream.respond({ ...grpcHead, 'grpc-status': String(code), 'grpc-message': message }, { endStream: true });
      stream.close(NGHTTP2_NO_ERROR);
    };

    it('ends its watches with the status the server ended the stream with', async () => {
      answer = endAsEtcd(Status.UNAVAILABLE, 'etcdserver: no leader');
      const err = await watchError();
      expect([err.code, err.message]).to.deep.equal(['NO_LEADER', 'etcdserver: no leader']);
    });

    it('ends its watches as UNAVAILABLE when the server ends the stream as OK', async () => {
      answer = endAsEtcd(Status.OK, '');
      const err = await watchError();
      expect([err.code, err.message]).to.deep.equal(['UNAVAILABLE', `watch stream to ${authority}: the server ended the watch stream`]);
    });

    // A Node server, Carina's store among them, ends its side and leaves the stream open.
    it('ends its watches when the server ends the stream with a status but does not reset it', async () => {
      answer = (stream) => stream.respond({ ...grpcHead, 'grpc-status': String(Status.UNAVAILABLE), 'grpc-message': 'etcdserver: no leader' }, { endStream: true });
      const err = await watchError();
      expect([err.code, err.message]).to.deep.equal(['NO_LEADER', 'etcdserver: no leader']);
    });

    it('ends its watches when the server ends the stream with OK trailers but does not reset it', async () => {
      answer = endWithTrailers(Status.OK, '');
      const err = await watchError();
      expect([err.code, err.message]).to.deep.equal(['UNAVAILABLE', `watch stream to ${authority}: the server ended the watch stream`]);
    });
  });
});
