/**
 * The import rules of the module map (ARCHITECTURE.md, "Layer order"), checked on a source tree:
 * imports are read by the TypeScript compiler's own pre-processor (static imports and exports of
 * either quote, `import()` and `require()`), resolved to files, and grouped by folder (src/<x>,
 * raft/<x>). Each rule names what breaks it, so a failing test lists every offending import.
 *
 * - folder-cycle: no two folders import each other, directly or around a longer loop;
 * - core-purity: raft/core imports only raft/core and does no I/O (no `node:` modules or packages,
 *   timers, clock, randomness or environment);
 * - index-surface: a folder with an index.ts is entered through it only;
 * - layer-order: a folder imports only folders of its own or lower layers, and every folder is
 *   in a layer;
 * - raft-alone: raft/ imports nothing from src/ or test/;
 * - raft-through-index: src/ reaches raft/ only through raft/index.ts;
 * - no-test-code: production code never imports mocha, chai or test/.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

export type ImportRule = 'folder-cycle' | 'core-purity' | 'index-surface' | 'layer-order' | 'raft-alone' | 'raft-through-index' | 'no-test-code';

export interface ImportViolation {
  rule: ImportRule;
  detail: string;
}

export interface ImportEdge {
  /** Repository-relative path of the importing file. */
  from: string;
  /** Repository-relative path of the imported file (without .ts), or the package name. */
  to: string;
  spec: string;
}

/** Folders from the top layer down; folders of one layer may import each other's (cycles aside). */
export type LayerOrder = ReadonlyArray<ReadonlyArray<string>>;

function sourcesUnder(root: string, dir: string): string[] {
  const full = join(root, dir);
  if (!existsSync(full)) return [];
  const out: string[] = [];
  for (const name of readdirSync(full)) {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) out.push(...sourcesUnder(root, path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The import specifiers of one file, as the TypeScript compiler reads them. */
export function importSpecifiers(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((file) => file.fileName);
}

/** `spec` from `file`, as a repository-relative path without extension (a folder: its index). */
function resolveSpecifier(root: string, file: string, spec: string): string {
  if (!spec.startsWith('.')) return spec;
  const path = relative(root, resolve(root, dirname(file), spec)).replace(/\.(js|ts)$/, '');
  if (existsSync(join(root, `${path}.ts`))) return path;
  if (existsSync(join(root, path, 'index.ts'))) return `${path}/index`;
  return path;
}

/** Every import of every .ts file under `dirs` (repository-relative). */
export function importEdges(root: string, dirs: readonly string[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const dir of dirs) {
    for (const file of sourcesUnder(root, dir)) {
      for (const spec of importSpecifiers(readFileSync(join(root, file), 'utf8'))) {
        edges.push({ from: file.replace(/\.ts$/, ''), to: resolveSpecifier(root, file, spec), spec });
      }
    }
  }
  return edges;
}

/** The folder a module belongs to: src/<x> or raft/<x>; raft/index is `raft`; anything else itself. */
export function folderOf(path: string): string {
  const parts = path.split('/');
  if ((parts[0] === 'src' || parts[0] === 'raft') && parts.length > 2) return `${parts[0]}/${parts[1]}`;
  return parts[0] === 'raft' ? 'raft' : path;
}

const isLocal = (path: string) => path.startsWith('src/') || path.startsWith('raft/') || path === 'raft' || path.startsWith('test/');

/** Folders that import each other around a loop (Tarjan's strongly connected components). */
function folderCycles(edges: ReadonlyArray<{ from: string; to: string }>): string[][] {
  const graph = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    if (from === to) continue;
    if (!graph.has(from)) graph.set(from, new Set());
    graph.get(from)?.add(to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) as number, low.get(to) as number));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node) as number, index.get(to) as number));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return cycles;
}

/** Words in raft/core's code (comments and strings aside) that mean I/O, a clock, randomness or the environment. */
const IMPURE = /\b(setTimeout|setInterval|setImmediate|queueMicrotask|Date|performance|process|Math\.random|require)\b/;

function codeOnly(text: string): string {
  const scanner = ts.createScanner(ts.ScriptTarget.ES2022, false, ts.LanguageVariant.Standard, text);
  const words: string[] = [];
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.Identifier || kind === ts.SyntaxKind.DotToken) words.push(scanner.getTokenText());
    else words.push(' ');
  }
  return words.join('').replace(/ +/g, ' ');
}

export interface ImportRulesOptions {
  root: string;
  layers: LayerOrder;
  /** Folders whose files may import test code (the simulator and its checkers live in raft/testing). */
  testCodeFolders?: readonly string[];
}

/** Every violation of the rules in the tree at `root` (its src/ and raft/). */
export function checkImportRules(options: ImportRulesOptions): ImportViolation[] {
  const { root, layers } = options;
  const edges = importEdges(root, ['src', 'raft']);
  const violations: ImportViolation[] = [];
  const say = (rule: ImportRule, edge: ImportEdge) => violations.push({ rule, detail: `${edge.from} -> ${edge.spec}` });
  const layerOf = new Map<string, number>();
  layers.forEach((layer, i) => layer.forEach((folder) => layerOf.set(folder, i)));
  const folderEdges: Array<{ from: string; to: string }> = [];
  const unlisted = new Set<string>();
  for (const edge of edges) {
    const from = folderOf(edge.from);
    const local = isLocal(edge.to);
    const to = local ? folderOf(edge.to) : edge.to;
    if (from === 'raft/core' && (!local || to !== 'raft/core')) say('core-purity', edge);
    if (from.startsWith('raft') && local && (edge.to.startsWith('src/') || edge.to.startsWith('test/'))) say('raft-alone', edge);
    if (from.startsWith('src/') && local && (to === 'raft' || to.startsWith('raft/')) && edge.to !== 'raft/index') say('raft-through-index', edge);
    const testCode = edge.to === 'mocha' || edge.to === 'chai' || edge.to.startsWith('test/');
    if (testCode && !(options.testCodeFolders ?? []).includes(from)) say('no-test-code', edge);
    if (!local || to === from || edge.to.startsWith('test/')) continue;
    folderEdges.push({ from, to });
    const surface = `${to === 'raft' ? 'raft' : to}/index`;
    if (existsSync(join(root, `${surface}.ts`)) && edge.to !== surface) say('index-surface', edge);
    for (const folder of [from, to]) {
      if (!layerOf.has(folder)) unlisted.add(folder);
    }
    const fromLayer = layerOf.get(from);
    const toLayer = layerOf.get(to);
    if (fromLayer !== undefined && toLayer !== undefined && toLayer < fromLayer) say('layer-order', edge);
  }
  for (const folder of [...unlisted].sort()) violations.push({ rule: 'layer-order', detail: `${folder} is in no layer` });
  for (const cycle of folderCycles(folderEdges)) violations.push({ rule: 'folder-cycle', detail: cycle.join(' <-> ') });
  for (const file of sourcesUnder(root, 'raft/core')) {
    const found = IMPURE.exec(codeOnly(readFileSync(join(root, file), 'utf8')));
    if (found !== null) violations.push({ rule: 'core-purity', detail: `${file.replace(/\.ts$/, '')} uses ${found[0]}` });
  }
  return violations;
}

/**
 * The layer order written in ARCHITECTURE.md: the fenced block after the heading "Layer order",
 * one layer per line, top first, folders separated by spaces.
 */
export function layerOrderFrom(markdown: string): string[][] {
  const heading = markdown.search(/^#+ Layer order\s*$/m);
  if (heading < 0) throw new Error('ARCHITECTURE.md has no "Layer order" heading');
  const block = /```[a-z]*\n([\s\S]*?)```/.exec(markdown.slice(heading));
  if (block === null) throw new Error('the "Layer order" section has no fenced block');
  return (block[1] as string).split('\n').map((line) => line.replace(/#.*$/, '').trim()).filter((line) => line !== '').map((line) => line.split(/\s+/));
}
