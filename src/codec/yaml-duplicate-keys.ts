/**
 * Duplicate keys in a YAML request body. Our YAML reader, like Go's lenient one, keeps the last
 * of two equal keys; kube-apiserver v1.25 also runs the body through sigs.k8s.io/yaml's strict
 * converter (yaml.v2 UnmarshalStrict) and reports what it finds as a field-validation error.
 * This returns that error's text, or undefined when every mapping has distinct keys.
 */
import YAML from 'yaml';

export function yamlDuplicateKeysError(text: string): string | undefined {
  const lines = new YAML.LineCounter();
  let document: YAML.Document.Parsed;
  try {
    document = YAML.parseDocument(text, { uniqueKeys: false, lineCounter: lines });
  } catch {
    return undefined;
  }
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
