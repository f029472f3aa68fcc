/**
 * Go's ways of printing that kube-apiserver's messages are made of: %q of a string and of a
 * []string, and the text of an aggregate of errors (k8s.io/apimachinery pkg/util/errors).
 */

/** strconv.Quote for the strings RBAC deals in: escapes `"`, `\` and control characters. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0) as number;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** fmt's %q of a []string: `["a" "b"]`, `[]` when empty. */
export function goQuoteList(list: readonly string[]): string {
  return `[${list.map(goQuote).join(' ')}]`;
}

/**
 * utilerrors.NewAggregate(errs).Error(): '' for none, the message for one, otherwise the
 * distinct messages in order as `[a, b]`.
 */
export function aggregateErrorText(messages: readonly string[]): string {
  if (messages.length === 0) return '';
  if (messages.length === 1) return messages[0];
  const seen: string[] = [];
  for (const m of messages) if (!seen.includes(m)) seen.push(m);
  if (seen.length === 1) return seen[0];
  return `[${seen.join(', ')}]`;
}
