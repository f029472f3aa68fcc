/**
 * Reading request headers as Go's http.Header does, for the authenticators that look at them
 * (bearer token, WebSocket subprotocol, request header, impersonation).
 *
 * Header maps arrive lower-cased. A value may be a string or a list: several headers of one name
 * must stay apart (`X-Remote-Group: a` and `X-Remote-Group: b` are two groups, and a group name
 * may contain a comma), so callers should build the map with `distinctHeaders(rawHeaders)` or
 * node's `headersDistinct`, not node's `headers`, which joins repeats with ", ".
 */

export type HeaderMap = Readonly<Record<string, string | readonly string[] | undefined>>;

/** Every value of header `name` (any case), in the order received. */
export function headerValues(headers: HeaderMap, name: string): readonly string[] {
  const value = headers[name.toLowerCase()];
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : value;
}

/** The first value of `name`, '' when absent: Go's Header.Get. */
export function firstHeaderValue(headers: HeaderMap, name: string): string {
  const values = headerValues(headers, name);
  return values.length === 0 ? '' : values[0];
}

export function hasHeader(headers: HeaderMap, name: string): boolean {
  return headerValues(headers, name).length > 0;
}

/**
 * A lower-cased header map with every value kept apart, from node's `rawHeaders` (name, value,
 * name, value, ...), for HTTP/1.1 and HTTP/2 requests alike.
 */
export function distinctHeaders(rawHeaders: readonly string[]): Record<string, string[]> {
  const out: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase();
    // HTTP/2 pseudo-headers are not headers a client sets.
    if (name.startsWith(':')) continue;
    (out[name] ??= []).push(rawHeaders[i + 1]);
  }
  return out;
}

/** A copy of `headers` without the names `drop` says to drop. */
export function withoutHeaders<T extends string | readonly string[] | undefined>(
  headers: Readonly<Record<string, T>>,
  drop: (lowerCaseName: string) => boolean,
): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!drop(name.toLowerCase())) out[name] = value;
  }
  return out;
}

/**
 * Go's url.PathUnescape: `%XX` sequences decoded as UTF-8 bytes; null when a `%` is not followed
 * by two hex digits (the callers then keep the text as it came, as kube-apiserver does).
 */
export function pathUnescape(text: string): string | null {
  if (!text.includes('%')) return text;
  if (/%(?![0-9A-Fa-f]{2})/.test(text)) return null;
  const bytes: number[] = [];
  for (let i = 0; i < text.length; ) {
    if (text[i] === '%') {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 3;
    } else {
      const code = text.codePointAt(i) as number;
      const char = String.fromCodePoint(code);
      bytes.push(...Buffer.from(char, 'utf8'));
      i += char.length;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
