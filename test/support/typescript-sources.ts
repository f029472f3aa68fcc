/** The TypeScript source files under a folder (declaration files left out), for the tidy tests that read the tree. */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function typescriptSources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return typescriptSources(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}
