/**
 * The folder holding Carina's package.json. Data files that ship with the source (the v1.25
 * catalogue, OpenAPI documents, Protobuf descriptors) are found from it, so the same code works
 * from `src/` under ts-node-like runners and from any compiled `dist*` folder.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

let cached: string | undefined;

export function packageRoot(): string {
  if (cached !== undefined) return cached;
  let dir = __dirname;
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'src'))) {
      cached = dir;
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`package root not found above ${__dirname}`);
    dir = parent;
  }
}

/** A path inside the package: packagePath('src', 'apis', 'data', 'x.json'). */
export function packagePath(...parts: string[]): string {
  return join(packageRoot(), ...parts);
}
