/**
 * YAML (`application/yaml`) as kube-apiserver v1.25 reads and writes it.
 *
 * kube-apiserver turns its JSON into YAML with sigs.k8s.io/yaml JSONToYAML, which decodes the JSON
 * into Go maps and encodes them with gopkg.in/yaml.v2; so output keys come in yaml.v2's sorted
 * order (its keyList.Less, a "natural" order: `a2` before `a10`), sequences are not indented under
 * their key, and strings that YAML 1.1 would read as another type ("true", "yes", "1",
 * "2008-01-01T01:01:01Z") are double-quoted. Reading goes through yaml.v2 too, so YAML 1.1 scalars
 * apply: `yes`/`on` are booleans, `012` is octal; timestamps stay strings.
 *
 * Known difference: yaml.v2 folds plain and quoted strings longer than 80 columns over several
 * lines; this writer keeps each string on one line. Both read back as the same value.
 *
 * Reading is bounded as a JSON body is, because YAML lets a small text stand for a huge value:
 * - nesting: more than MAX_BODY_DEPTH collections deep is refused (the JSON body's limit), found
 *   while lexing for flow and compact block nesting (so a text of 3 MiB of `[` costs a thousand
 *   tokens), then exactly on the syntax tree before any recursive code walks it;
 * - aliases: counted as yaml.v2's decoder counts them (decode.go `unmarshal`: every node decoded,
 *   and those decoded inside an alias), refused with its "document contains excessive aliasing"
 *   once aliases make more than 99% of the decodes (scaling down to 10% between 400,000 and
 *   4,000,000 decodes); the value of an alias is shared, never copied, until it is serialized;
 * - expansion: a value whose scalars, aliases expanded, exceed EXPANDED_TEXT_BYTES_MAX is refused
 *   as too large (a few aliases of one long string stay under the alias ratio).
 * The size of the text itself is the HTTP layer's to limit (3 MiB, 413) before it gets here.
 * Parsing stays expensive (about 3-6 s per MiB of tiny nodes); src/codec/yaml-body-decoder.ts
 * runs request bodies on a worker thread so that this never blocks the replica.
 */
import * as YAML from 'yaml';
import { MAX_BODY_DEPTH } from '../util';
import { duplicateKeysErrorOf } from './yaml-duplicate-keys';

export type YamlCodecErrorReason = 'Malformed' | 'MultipleDocuments' | 'NotRepresentable' | 'TooDeep' | 'ExcessiveAliasing' | 'TooLarge';

export class YamlCodecError extends Error {
  override name = 'YamlCodecError';

  constructor(
    readonly reason: YamlCodecErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** YAML 1.1 tags that yaml.v2 does not apply when decoding into interface{}. */
const unusedYaml11Tags = new Set(['tag:yaml.org,2002:timestamp', 'tag:yaml.org,2002:binary', 'tag:yaml.org,2002:omap', 'tag:yaml.org,2002:pairs', 'tag:yaml.org,2002:set']);

const parseOptions: YAML.ParseOptions & YAML.DocumentOptions & YAML.SchemaOptions = {
  version: '1.1',
  // yaml.v2 Unmarshal keeps the last of duplicate keys rather than failing.
  uniqueKeys: false,
  customTags: (tags) => tags.filter((tag) => !(typeof tag === 'object' && (unusedYaml11Tags.has(tag.tag) || tag.format === 'TIME'))),
};

const stringifyOptions: YAML.DocumentOptions & YAML.SchemaOptions & YAML.CreateNodeOptions & YAML.ToStringOptions = {
  version: '1.1',
  sortMapEntries: (a, b) => compareYamlV2Keys(String(a.key), String(b.key)),
  indentSeq: false,
  lineWidth: 0,
  minContentWidth: 0,
};

/**
 * The YAML text of a JSON value, as kube-apiserver writes it.
 *
 * @example toYaml({ kind: 'ConfigMap', apiVersion: 'v1' }) === 'apiVersion: v1\nkind: ConfigMap\n'
 */
export function toYaml(value: unknown): string {
  try {
    return YAML.stringify(value, stringifyOptions);
  } catch (error) {
    throw new YamlCodecError('NotRepresentable', `encode YAML: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/**
 * The JSON value of a single-document YAML text, bounded as the module header says.
 *
 * @throws YamlCodecError Malformed on a syntax error, MultipleDocuments when the text holds more
 *   than one, TooDeep, ExcessiveAliasing or TooLarge beyond the bounds.
 */
export function fromYaml(text: string): unknown {
  const document = parseBoundedDocument(text);
  return document === undefined ? null : (document.toJS({ maxAliasCount: -1 }) as unknown);
}

/** A YAML request body decoded: its value as JSON text, and the strict reader's complaint. */
export interface DecodedYaml {
  /** The JSON text of the document's value (`null` for an empty text). */
  json: string;
  /** yaml.v2 UnmarshalStrict's duplicate-key error (kube's strict field validation), when asked for and found. */
  duplicateKeysError?: string;
}

/**
 * A YAML request body as JSON text, with its duplicate keys when `withDuplicateKeys`: one parse
 * for both. JSON text rather than a value because it crosses a worker thread's boundary, where
 * JSON.parse is the cheapest way back in.
 *
 * @throws YamlCodecError as fromYaml.
 */
export function decodeYaml(text: string, withDuplicateKeys: boolean): DecodedYaml {
  const lineCounter = new YAML.LineCounter();
  const document = parseBoundedDocument(text, lineCounter);
  if (document === undefined) return { json: 'null' };
  let json: string;
  try {
    json = JSON.stringify(document.toJS({ maxAliasCount: -1 }));
  } catch (error) {
    throw new YamlCodecError('NotRepresentable', `decode YAML: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const duplicateKeysError = withDuplicateKeys ? duplicateKeysErrorOf(document, lineCounter) : undefined;
  return duplicateKeysError === undefined ? { json } : { json, duplicateKeysError };
}

/** What the scalars of one document may add up to once its aliases are expanded. */
export const EXPANDED_TEXT_BYTES_MAX = 64 * 1024 * 1024;

/** The one document of `text`, checked against every bound; undefined for an empty text. */
function parseBoundedDocument(text: string, lineCounter: YAML.LineCounter = new YAML.LineCounter()): YAML.Document.Parsed | undefined {
  const composer = new YAML.Composer(parseOptions);
  const documents: YAML.Document.Parsed[] = [];
  for (const document of composer.compose(depthCheckedTokens(text, lineCounter))) {
    documents.push(document);
    if (documents.length > 1) throw new YamlCodecError('MultipleDocuments', 'decode YAML: expected one document, found more than one');
  }
  const document = documents[0];
  if (document === undefined) return undefined; // an empty stream: yaml.v2 gives a nil value
  const firstError = document.errors[0];
  if (firstError !== undefined) {
    // The line and column, not the text around them: a body may hold a Secret.
    const where = firstError.pos[0] < 0 ? '' : ` at line ${lineCounter.linePos(firstError.pos[0]).line}, column ${lineCounter.linePos(firstError.pos[0]).col}`;
    throw new YamlCodecError('Malformed', `decode YAML: ${firstError.message}${where}`, { cause: firstError });
  }
  checkDecodeBudget(document);
  return document;
}

/**
 * The syntax tree of `text`, refused as TooDeep as soon as it nests more than MAX_BODY_DEPTH
 * collections: a lower bound while lexing (flow brackets, and `- - -` or `? ? ?` on one line),
 * which stops a hostile text after a thousand tokens, then the exact depth of each document.
 */
function* depthCheckedTokens(text: string, lineCounter: YAML.LineCounter): Generator<YAML.CST.Token> {
  const parser = new YAML.Parser(lineCounter.addNewLine);
  lineCounter.addNewLine(0);
  let flowDepth = 0;
  let compactDepth = 0;
  let afterScalarMarker = false;
  for (const lexeme of new YAML.Lexer().lex(text)) {
    // The lexeme after the scalar marker is a scalar's text, whatever characters it holds.
    if (afterScalarMarker) afterScalarMarker = false;
    else if (lexeme === YAML.CST.SCALAR) afterScalarMarker = true;
    else if (lexeme === '[' || lexeme === '{') flowDepth++;
    else if (lexeme === ']' || lexeme === '}') flowDepth = Math.max(0, flowDepth - 1);
    else if (lexeme === '-' || lexeme === '?') compactDepth++;
    else if (lexeme === '\n' || lexeme === '\r\n') compactDepth = 0;
    if (flowDepth > MAX_BODY_DEPTH || compactDepth > MAX_BODY_DEPTH) throw tooDeep();
    yield* depthChecked(parser.next(lexeme));
  }
  yield* depthChecked(parser.end());
}

function* depthChecked(tokens: Generator<YAML.CST.Token>): Generator<YAML.CST.Token> {
  for (const token of tokens) {
    if (token.type === 'document' && syntaxDepth(token) > MAX_BODY_DEPTH) throw tooDeep();
    yield token;
  }
}

function tooDeep(): YamlCodecError {
  return new YamlCodecError('TooDeep', `the request body nests more than ${MAX_BODY_DEPTH} levels deep`);
}

/** How many collections deep a document's syntax tree nests, walked without recursion. */
function syntaxDepth(document: YAML.CST.Document): number {
  let deepest = 0;
  const stack: Array<{ token: YAML.CST.Token | null | undefined; depth: number }> = [{ token: document.value, depth: 0 }];
  while (stack.length > 0) {
    const { token, depth } = stack.pop() as { token: YAML.CST.Token | null | undefined; depth: number };
    if (!YAML.CST.isCollection(token)) continue;
    const inner = depth + 1;
    if (inner > deepest) deepest = inner;
    if (deepest > MAX_BODY_DEPTH) return deepest;
    for (const item of token.items) {
      if (item.key !== undefined) stack.push({ token: item.key, depth: inner });
      stack.push({ token: item.value, depth: inner });
    }
  }
  return deepest;
}

// gopkg.in/yaml.v2 decode.go: beyond these many decodes, aliases may make a smaller share of them.
const ALIAS_RATIO_RANGE_LOW = 400_000;
const ALIAS_RATIO_RANGE_HIGH = 4_000_000;

function allowedAliasRatio(decodeCount: number): number {
  if (decodeCount <= ALIAS_RATIO_RANGE_LOW) return 0.99;
  if (decodeCount >= ALIAS_RATIO_RANGE_HIGH) return 0.1;
  return 0.99 - 0.89 * ((decodeCount - ALIAS_RATIO_RANGE_LOW) / (ALIAS_RATIO_RANGE_HIGH - ALIAS_RATIO_RANGE_LOW));
}

/**
 * Walks a document as yaml.v2 decodes it into interface{}, aliases followed, counting what it
 * would decode; throws at the first bound crossed. Nothing is built, so a refused bomb costs only
 * the decodes counted before the ratio tripped (yaml.v2 needs more than 1,000 decodes and 100
 * alias decodes before it judges the ratio, and so does this).
 */
function checkDecodeBudget(document: YAML.Document.Parsed): void {
  let decodeCount = 0;
  let aliasCount = 0;
  let aliasDepth = 0;
  let expandedBytes = 0;
  const followed = new Set<YAML.Alias>();
  const decode = (node: unknown, depth: number): void => {
    decodeCount++;
    if (aliasDepth > 0) aliasCount++;
    if (aliasCount > 100 && decodeCount > 1000 && aliasCount / decodeCount > allowedAliasRatio(decodeCount)) {
      throw new YamlCodecError('ExcessiveAliasing', 'yaml: document contains excessive aliasing');
    }
    if (YAML.isAlias(node)) {
      if (followed.has(node)) throw new YamlCodecError('Malformed', `yaml: anchor '${node.source}' value contains itself`);
      const target = node.resolve(document);
      if (target === undefined) return;
      followed.add(node);
      aliasDepth++;
      decode(target, depth);
      aliasDepth--;
      followed.delete(node);
    } else if (YAML.isScalar(node)) {
      const value = node.value;
      expandedBytes += typeof value === 'string' ? value.length : 8;
      if (expandedBytes > EXPANDED_TEXT_BYTES_MAX) throw new YamlCodecError('TooLarge', `decode YAML: the document expands to more than ${EXPANDED_TEXT_BYTES_MAX} bytes`);
    } else if (YAML.isMap(node) || YAML.isSeq(node)) {
      if (depth + 1 > MAX_BODY_DEPTH) throw tooDeep();
      for (const item of node.items) {
        if (!YAML.isPair(item)) decode(item, depth + 1);
        else if (isMergeKey(item.key)) decodeMerge(item.value, depth + 1);
        else {
          decode(item.key, depth + 1);
          decode(item.value, depth + 1);
        }
      }
    }
  };
  // yaml.v2 decode.go merge: a mapping or an alias is decoded once, a sequence item by item.
  const decodeMerge = (node: unknown, depth: number): void => {
    if (YAML.isSeq(node)) for (const item of node.items) decode(item, depth);
    else decode(node, depth);
  };
  decode(document.contents, 0);
}

function isMergeKey(key: unknown): boolean {
  if (!YAML.isScalar(key)) return false;
  const value = key.value;
  return value === '<<' || (typeof value === 'symbol' && value.description === '<<');
}

/**
 * gopkg.in/yaml.v2 map key order for string keys (sorter.go keyList.Less): at the first differing
 * rune, two letters compare by code point; a letter sorts after a non-letter; otherwise the runs of
 * digits starting there compare as numbers, then by length, then by rune.
 */
export function compareYamlV2Keys(a: string, b: string): number {
  if (a === b) return 0;
  return yamlV2KeyLess(a, b) ? -1 : 1;
}

const letter = /\p{L}/u;
const digit = /\p{Nd}/u;

function yamlV2KeyLess(a: string, b: string): boolean {
  const ar = [...a];
  const br = [...b];
  for (let i = 0; i < ar.length && i < br.length; i++) {
    const ac = ar[i] as string;
    const bc = br[i] as string;
    if (ac === bc) continue;
    const aLetter = letter.test(ac);
    const bLetter = letter.test(bc);
    if (aLetter && bLetter) return (ac.codePointAt(0) ?? 0) < (bc.codePointAt(0) ?? 0);
    if (aLetter || bLetter) return bLetter;
    let aNumber = 0;
    let bNumber = 0;
    if (ac === '0' || bc === '0') {
      // Inside a number that already has a non-zero digit, a zero is significant.
      for (let j = i - 1; j >= 0 && digit.test(ar[j] as string); j--) {
        if (ar[j] !== '0') {
          aNumber = 1;
          bNumber = 1;
          break;
        }
      }
    }
    let aEnd = i;
    for (; aEnd < ar.length && digit.test(ar[aEnd] as string); aEnd++) aNumber = aNumber * 10 + Number(ar[aEnd]);
    let bEnd = i;
    for (; bEnd < br.length && digit.test(br[bEnd] as string); bEnd++) bNumber = bNumber * 10 + Number(br[bEnd]);
    if (aNumber !== bNumber) return aNumber < bNumber;
    if (aEnd !== bEnd) return aEnd < bEnd;
    return (ac.codePointAt(0) ?? 0) < (bc.codePointAt(0) ?? 0);
  }
  return ar.length < br.length;
}
