/**
 * The Watch service's stream (etcd's watchServer): many watches multiplexed on one bidirectional
 * gRPC stream, numbered per stream from 0 as etcd numbers them unless the client picks an id, each
 * "created" response sent before any of the watch's events. A create with an id already in use on
 * the stream gets a canceled "created" response; a cancel answers a canceled response; a progress
 * request is answered to every watch on the stream (replica-watches.ts).
 *
 * Flow control: when the HTTP/2 stream cannot take more (write() returns false) the hub pauses
 * the watch; on 'drain' the paused watches resume, so a slow watcher costs no memory beyond the
 * stream's own buffer. The stream's end or close cancels every watch on it.
 */
import type * as http2 from 'node:http2';
import type { Watcher } from '../kv';
import { codecFor, type EtcdResponseOf, type WatchRequest } from './codec';
import { FRAME_HEADER_BYTES, responseHeaders, Status, writeFrameHeader, type GrpcDeframer } from './grpc-framing';
import type { KvReplica } from './kv-replica';

/** What a watch stream needs of the replica. */
export type WatchStreamReplica = Pick<KvReplica, 'openWatch' | 'cancelWatch' | 'resumeWatch' | 'requestProgress' | 'watchResponse' | 'revision'>;

/** How the stream's frames leave, counted in the server's metrics (grpc-server.ts). */
export interface WatchStreamReplies {
  /** Writes one frame; false when the stream's buffer is full. */
  write(frame: Uint8Array): boolean;
  sendOkTrailers(): void;
  /** Ends the stream, whose headers were sent, with a status in the trailers. */
  endWithStatus(code: number, message: string): void;
}

export function serveWatchStream(stream: http2.ServerHttp2Stream, deframer: GrpcDeframer, replica: WatchStreamReplica, replies: WatchStreamReplies): void {
  const watchers = new Map<number, Watcher>();
  const responseCodec = codecFor('WatchResponse');
  let nextWatchId = 0;
  let open = true;
  stream.respond(responseHeaders(), { waitForTrailers: true });
  stream.on('wantTrailers', () => replies.sendOkTrailers());
  const send = (response: EtcdResponseOf<'watch'>): boolean => {
    if (!open) return true;
    return replies.write(writeFrameHeader(responseCodec.encodeWithPrefix(response, FRAME_HEADER_BYTES)));
  };
  const close = () => {
    if (!open) return;
    open = false;
    for (const w of watchers.values()) replica.cancelWatch(w);
    watchers.clear();
  };
  stream.on('drain', () => {
    for (const w of watchers.values()) if (w.paused) replica.resumeWatch(w);
  });
  stream.on('close', close);
  stream.on('end', () => {
    close();
    if (!stream.closed && !stream.writableEnded) stream.end();
  });
  stream.on('data', (chunk: Buffer) => {
    let messages: readonly Uint8Array[];
    try {
      messages = deframer.push(chunk);
    } catch (err) {
      close();
      replies.endWithStatus(Status.RESOURCE_EXHAUSTED, (err as Error).message);
      return;
    }
    for (const message of messages) {
      let request: WatchRequest;
      try {
        request = codecFor('WatchRequest').decode(message);
      } catch (err) {
        close();
        replies.endWithStatus(Status.INTERNAL, `grpc: error unmarshalling request: ${(err as Error).message}`);
        return;
      }
      if ('createRequest' in request) {
        const create = request.createRequest;
        let id = create.watchId && create.watchId > 0 ? create.watchId : -1;
        if (id > 0 && watchers.has(id)) {
          // etcd refuses a watch id already in use on the stream with a canceled "created" response.
          send(replica.watchResponse({ watchId: id, revision: replica.revision, events: [] }, { created: true, canceled: true }));
          continue;
        }
        if (id < 0) {
          while (watchers.has(nextWatchId)) nextWatchId++;
          id = nextWatchId++;
        }
        send(replica.watchResponse({ watchId: id, revision: replica.revision, events: [] }, { created: true }));
        const watchId = id;
        const watcher = replica.openWatch(create, (d) => {
          if (d.canceled) watchers.delete(watchId);
          return send(replica.watchResponse(d));
        }, watchId);
        if (!watcher.canceled) watchers.set(watchId, watcher);
      } else if ('cancelRequest' in request) {
        const id = request.cancelRequest.watchId;
        const watcher = watchers.get(id);
        if (watcher) {
          replica.cancelWatch(watcher);
          watchers.delete(id);
          send(replica.watchResponse({ watchId: id, revision: replica.revision, events: [] }, { canceled: true }));
        }
      } else {
        replica.requestProgress([...watchers.values()]);
      }
    }
  });
}
