/** Runs a command-line tool (openssl, curl) for the end-to-end tests: stdin in, exit code and output back, killed after 30 s. */
import { spawn } from 'node:child_process';
import type { CommandResult } from './carina-api-process';

/** stdout is kept byte for byte (latin1), for tools that print binary (openssl -binary, DER). */
export function runCommand(command: string, args: string[], options: { cwd?: string; input?: string | Buffer } = {}): Promise<CommandResult> {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('latin1')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? -1, stdout, stderr });
    });
    // A tool that exits without reading its input (openssl ecparam) closes the pipe: not an error.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}
