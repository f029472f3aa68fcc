/**
 * Duplicate object keys in raw JSON text. JSON.parse keeps the last value of a repeated key, so
 * only the text shows them; kube-apiserver's strict decoder (sigs.k8s.io/json) reports each as
 * `duplicate field "<path>"` with the path of the repeated member.
 */

/** One repeated key, where the strict decoder meets it. */
export interface DuplicateField {
  /** Path of the object holding the key, as the strict decoder prints it ('' at the top level). */
  readonly parentPath: string;
  readonly key: string;
  /** How many distinct keys of that object came before the repetition (at least 1). */
  readonly distinctKeysBefore: number;
}

/** Joins a path segment as sigs.k8s.io/json's strict field stack does. */
export function childPath(parentPath: string, key: string): string {
  return parentPath === '' ? key : `${parentPath}.${key}`;
}

/** Where a container sits: its parent and its key or index there. Paths are built only when needed. */
interface Place { readonly parent: Frame | undefined; readonly step: string | number }
interface ObjectFrame extends Place { readonly kind: 'object'; readonly keys: Set<string>; pendingKey: string | undefined; path: string | undefined }
interface ArrayFrame extends Place { readonly kind: 'array'; index: number; path: string | undefined }
type Frame = ObjectFrame | ArrayFrame;

function pathOf(frame: Frame | undefined): string {
  if (frame === undefined) return '';
  if (frame.path === undefined) {
    const parentPath = pathOf(frame.parent);
    frame.path = typeof frame.step === 'number' ? `${parentPath}[${frame.step}]` : frame.parent === undefined ? '' : childPath(parentPath, frame.step);
  }
  return frame.path;
}

/** The index just past the string token that starts at `start` (its opening quote). */
function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return text.length;
    let backslashes = 0;
    for (let k = quote - 1; k > start && text.charCodeAt(k) === 0x5c; k--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The value of the string token text[start, end). */
function stringValue(text: string, start: number, end: number): string {
  const inner = text.slice(start + 1, end - 1);
  return inner.includes('\\') ? (JSON.parse(text.slice(start, end)) as string) : inner;
}

/** Every repeated key of every object in `jsonText`, in text order (one pass, no tree is built). */
export function scanDuplicateFields(jsonText: string): DuplicateField[] {
  const found: DuplicateField[] = [];
  const stack: Frame[] = [];
  // Where a value about to start sits: the pending key of an object, or the next index of an array.
  const stepIn = (top: Frame | undefined): string | number => top === undefined ? '' : top.kind === 'array' ? top.index : top.pendingKey ?? '';
  const valueDone = (): void => {
    const top = stack[stack.length - 1];
    if (top?.kind === 'array') top.index++;
    else if (top !== undefined) top.pendingKey = undefined;
  };
  let index = 0;
  const length = jsonText.length;
  while (index < length) {
    const code = jsonText.charCodeAt(index);
    switch (code) {
      case 0x7b: { // {
        const top = stack[stack.length - 1];
        stack.push({ parent: top, step: stepIn(top), kind: 'object', keys: new Set(), pendingKey: undefined, path: undefined });
        index++;
        break;
      }
      case 0x5b: { // [
        const top = stack[stack.length - 1];
        stack.push({ parent: top, step: stepIn(top), kind: 'array', index: 0, path: undefined });
        index++;
        break;
      }
      case 0x7d: // }
      case 0x5d: // ]
        stack.pop();
        valueDone();
        index++;
        break;
      case 0x22: { // "
        const end = stringEnd(jsonText, index);
        const top = stack[stack.length - 1];
        if (top?.kind === 'object' && top.pendingKey === undefined) {
          const key = stringValue(jsonText, index, end);
          if (top.keys.has(key)) {
            found.push({ parentPath: pathOf(top), key, distinctKeysBefore: top.keys.size });
          } else {
            top.keys.add(key);
          }
          top.pendingKey = key;
        } else {
          valueDone();
        }
        index = end;
        break;
      }
      case 0x2c: // ,
      case 0x3a: // :
      case 0x20: case 0x09: case 0x0a: case 0x0d:
        index++;
        break;
      default: {
        // A number, true, false or null: skip to the next delimiter.
        while (index < length) {
          const c = jsonText.charCodeAt(index);
          if (c === 0x2c || c === 0x7d || c === 0x5d || c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) break;
          index++;
        }
        valueDone();
      }
    }
  }
  return found;
}

/** The paths of repeated keys (`metadata.name`, `spec.template.spec.containers[0].image`), in text order. */
export function findDuplicateFields(jsonText: string): string[] {
  return scanDuplicateFields(jsonText).map((duplicate) => childPath(duplicate.parentPath, duplicate.key));
}
