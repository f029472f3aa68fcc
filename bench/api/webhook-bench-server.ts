/**
 * The webhook the admission-webhook benchmark calls, in a process of its own (so that it does
 * not share an event loop with the load generator): HTTPS on 127.0.0.1, a serving certificate
 * from a CA made at start, every AdmissionReview answered `allowed: true`. It sends
 * `{ port, caPem }` to its parent once listening, then the number of answers on request.
 */
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createClusterCa, issueServingCertificate } from '../../src/certificates';

async function main(): Promise<void> {
  const ca = await createClusterCa();
  const serving = await issueServingCertificate(ca);
  let answered = 0;
  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // The uid is the request's first field: no need to parse the whole review (the webhook is not what is measured).
      const text = Buffer.concat(chunks).toString('utf8');
      const uid = /"uid":"([^"]+)"/.exec(text)?.[1] ?? '';
      const apiVersion = /"apiVersion":"(admission\.k8s\.io\/v1(?:beta1)?)"/.exec(text)?.[1] ?? 'admission.k8s.io/v1';
      answered++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"apiVersion":"${apiVersion}","kind":"AdmissionReview","response":{"uid":"${uid}","allowed":true}}`);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.send?.({ port: (server.address() as AddressInfo).port, caPem: ca.certPem });
  process.on('message', (message) => {
    if (message === 'count') process.send?.({ answered });
    if (message === 'stop') server.close(() => process.exit(0));
  });
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
