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
 */
import * as YAML from 'yaml';

export type YamlCodecErrorReason = 'Malformed' | 'MultipleDocuments' | 'NotRepresentable';

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
 * The JSON value of a single-document YAML text.
 *
 * @throws YamlCodecError Malformed on a syntax error, MultipleDocuments when the text holds more than one.
 */
export function fromYaml(text: string): unknown {
  const documents = YAML.parseAllDocuments(text, parseOptions);
  if (!Array.isArray(documents)) return null; // an empty stream: yaml.v2 gives a nil value
  if (documents.length > 1) {
    throw new YamlCodecError('MultipleDocuments', `decode YAML: expected one document, found ${documents.length}`);
  }
  const document = documents[0];
  if (document === undefined) return null;
  const firstError = document.errors[0];
  if (firstError !== undefined) {
    throw new YamlCodecError('Malformed', `decode YAML: ${firstError.message}`, { cause: firstError });
  }
  return document.toJS({ maxAliasCount: 100 }) as unknown;
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
