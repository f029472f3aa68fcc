/**
 * What loading the `carina` command costs at every start (issue 32): the packages that only some
 * configurations use (webhooks, OIDC, CRD rules in CEL) are loaded at their first use, not with
 * the command. Each case runs in its own Node process, whose module cache starts empty.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const DIST = join(__dirname, '..', '..', '..', '..');

/** Runs `script` in a fresh Node process (MAIN and CODEC name the built modules); returns its JSON output. */
function inFreshProcess(script: string): unknown {
  const prelude = `const MAIN = ${JSON.stringify(join(DIST, 'src', 'cli', 'main.js'))}; const CODEC = ${JSON.stringify(join(DIST, 'src', 'codec', 'index.js'))};\n`;
  return JSON.parse(execFileSync(process.execPath, ['-e', prelude + script], { encoding: 'utf8' }));
}

const LOADED_PACKAGES = `
  const packages = new Set();
  for (const file of Object.keys(require.cache)) {
    const match = /node_modules[\\\\/]((@[^\\\\/]+[\\\\/])?[^\\\\/]+)/.exec(file);
    if (match) packages.add(match[1].replace('\\\\', '/'));
  }
  process.stdout.write(JSON.stringify([...packages].sort()));
`;

describe('cli: loading the carina command', () => {
  it('loads no package that only webhooks, OIDC or CRD validation rules use', () => {
    const loaded = inFreshProcess(`require(MAIN);\n${LOADED_PACKAGES}`) as string[];
    // Sanity: the command's own dependencies are there, so the list is read right.
    expect(loaded).to.include.members(['@grpc/grpc-js', 'classic-level']);
    expect(loaded).to.not.include.members(['undici']);
    expect(loaded).to.not.include.members(['jose']);
    expect(loaded).to.not.include.members(['@bufbuild/cel']);
    expect(loaded).to.not.include.members(['@bufbuild/protobuf']);
  });
});
