/**
 * The worker thread behind YamlBodyDecoder (yaml-body-decoder.ts): decodes one YAML body per
 * message, in arrival order, and answers with its JSON text or the codec's error. Nothing here
 * touches the replica's state; a body that exhausts this thread's heap ends only this thread.
 */
import { parentPort } from 'node:worker_threads';
import { YamlCodecError, decodeYaml } from './yaml-codec';
import type { YamlWorkerReply, YamlWorkerRequest } from './yaml-body-decoder';

const port = parentPort;
if (port === null) throw new Error('yaml-worker: must run as a worker thread');

port.on('message', ({ id, text, withDuplicateKeys }: YamlWorkerRequest) => {
  let reply: YamlWorkerReply;
  try {
    reply = { id, decoded: decodeYaml(text, withDuplicateKeys) };
  } catch (error) {
    reply = error instanceof YamlCodecError
      ? { id, failure: { reason: error.reason, message: error.message } }
      : { id, failure: { reason: 'Internal', message: error instanceof Error ? error.message : String(error) } };
  }
  port.postMessage(reply);
});
