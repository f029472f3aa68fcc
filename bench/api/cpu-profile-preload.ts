/**
 * Preloaded (NODE_OPTIONS=--require) into every process of a server that bench/api/profile-fan-out
 * profiles: --cpu-prof is not allowed in NODE_OPTIONS, and a node:cluster worker inherits the
 * environment, not the primary's command line. Starts V8's sampling profiler through an
 * in-process inspector session and writes <CARINA_CPU_PROF_DIR>/<pid>.cpuprofile at exit (the
 * session answers synchronously, so the 'exit' handler can stop it).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.CARINA_CPU_PROF_DIR;
if (dir !== undefined && dir !== '') {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  process.on('exit', () => {
    session.post('Profiler.stop', (err, result) => {
      if (err === null) writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
