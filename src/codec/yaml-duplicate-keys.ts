/**
 * Duplicate keys in a YAML request body. Our YAML reader, like Go's lenient one, keeps the last
 * of two equal keys; kube-apiserver v1.25 also runs the body through sigs.k8s.io/yaml's strict
 * converter (yaml.v2 UnmarshalStrict) and reports what it finds as a field-validation error.
 * This reads the document the codec already parsed and bounded (yaml-codec.ts decodeYaml), so a
 * request body is parsed once.
 */
import YAML from 'yaml';

/** The strict converter's error text for a parsed document, or undefined when every mapping has distinct keys. */
export function duplicateKeysErrorOf(document: YAML.Document.Parsed, lines: YAML.LineCounter): string | undefined {
  const found: string[] = [];
  YAML.visit(document, {
    Map(_key, map) {
      const seen = new Set<string>();
      for (const item of map.items) {
        const key = YAML.isScalar(item.key) ? String(item.key.value) : String(item.key);
        if (seen.has(key)) {
          const line = YAML.isNode(item.key) && item.key.range !== undefined && item.key.range !== null ? lines.linePos(item.key.range[0]).line : 0;
          found.push(`  line ${line}: key ${JSON.stringify(key)} already set in map`);
        }
        seen.add(key);
      }
    },
  });
  if (found.length === 0) return undefined;
  return `error converting YAML to JSON: yaml: unmarshal errors:\n${found.join('\n')}`;
}
