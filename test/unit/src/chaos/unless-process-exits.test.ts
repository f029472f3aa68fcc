import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { ChaosClusterError, unlessProcessExits } from '../../../../src/chaos/chaos-cluster';
import { untilSettled } from '../../../support/until';

const nodeRunning = (script: string) => spawn(process.execPath, ['-e', script], { stdio: 'ignore' });

describe('chaos cluster: waiting on a member process', () => {
  it('fails at once, with the exit code and the log file, when the process exits first', async () => {
    const child = nodeRunning('process.exit(3)');
    const forever = new Promise<string>(() => undefined);
    // The work never ends: only the exit can settle the wait, and the bound fails the test rather than hang it.
    const waiting = unlessProcessExits(child, forever, 'member 7 exited while joining', '/tmp/member-7.log').then(() => null, (e: unknown) => e);
    const err = await untilSettled('the wait to fail on the exit', waiting, 5_000);
    expect(err).to.be.instanceOf(ChaosClusterError);
    expect((err as Error).message).to.equal('member 7 exited while joining (code 3; see /tmp/member-7.log)');
  });

  it('names the signal of a killed process, and one that had already exited', async () => {
    const killed = nodeRunning('setInterval(() => {}, 1000)');
    const waiting = unlessProcessExits(killed, new Promise<string>(() => undefined), 'member 8 exited', 'log');
    killed.kill('SIGKILL');
    expect(await waiting.then(() => '', (e: Error) => e.message)).to.equal('member 8 exited (SIGKILL; see log)');
    expect(await unlessProcessExits(killed, new Promise<string>(() => undefined), 'member 8 exited', 'log').then(() => '', (e: Error) => e.message)).to.equal('member 8 exited (SIGKILL; see log)');
  });

  it('gives the work\'s own outcome while the process runs, and stops listening for its exit', async () => {
    const child = nodeRunning('setInterval(() => {}, 1000)');
    try {
      expect(await unlessProcessExits(child, Promise.resolve('promoted'), 'x', 'log')).to.equal('promoted');
      const failure = await unlessProcessExits(child, Promise.reject(new Error('not in sync')), 'x', 'log').then(() => '', (e: Error) => e.message);
      expect(failure).to.equal('not in sync');
      expect(child.listenerCount('exit')).to.equal(0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
