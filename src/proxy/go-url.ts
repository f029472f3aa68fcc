/**
 * The parts of Go's net/url and path packages that kube's proxy transport uses to rewrite a
 * link (apimachinery pkg/util/proxy/transport.go rewriteURL): url.Parse, URL.String with its
 * EscapedPath and EscapedFragment, and path.Join. A rewritten link is what Go prints, byte for
 * byte, so these follow Go's rules rather than WHATWG's (which percent-encode, normalize and
 * resolve differently).
 *
 * Strings here are byte strings: one char per byte (latin1), as Node hands over header values
 * and as the HTML rewriter reads bodies, so a byte above 0x7f is escaped once, as Go escapes it.
 */

type Encoding = 'path' | 'host' | 'fragment';

/** A parsed URL, with Go's field names. */
export interface GoUrl {
  scheme: string;
  opaque: string;
  /** The userinfo as written (without the '@'); undefined when absent. */
  user?: string;
  host: string;
  path: string;
  /** The path as written, when it differs from Go's default escaping of `path`. */
  rawPath: string;
  forceQuery: boolean;
  rawQuery: string;
  fragment: string;
  rawFragment: string;
}

class GoUrlError extends Error {
  override name = 'GoUrlError';
}

function isHex(c: string): boolean {
  return /^[0-9a-fA-F]$/.test(c);
}

/** url.shouldEscape, on one byte. */
function shouldEscape(c: number, mode: Encoding): boolean {
  if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39)) return false;
  const ch = String.fromCharCode(c);
  if (mode === 'host' && '!$&\'()*+,;=:[]<>"'.includes(ch)) return false;
  if ('-_.~'.includes(ch)) return false;
  if ('$&+,/:;=?@'.includes(ch)) {
    if (mode === 'path') return ch === '?';
    if (mode === 'fragment') return false;
  }
  if (mode === 'fragment' && '!()*'.includes(ch)) return false;
  return true;
}

/** url.escape. */
function escape(s: string, mode: Encoding): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out += shouldEscape(c, mode) ? `%${c.toString(16).toUpperCase().padStart(2, '0')}` : s[i];
  }
  return out;
}

/** url.unescape (never in query mode here: '+' stays '+'). */
function unescape(s: string, mode: Encoding): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '%') {
      if (i + 2 >= s.length || !isHex(s[i + 1]) || !isHex(s[i + 2])) throw new GoUrlError(`invalid URL escape ${JSON.stringify(s.slice(i, i + 3))}`);
      out += String.fromCharCode(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
      continue;
    }
    if (mode === 'host' && c.charCodeAt(0) < 0x80 && shouldEscape(c.charCodeAt(0), mode)) throw new GoUrlError(`invalid character ${JSON.stringify(c)} in host name`);
    out += c;
  }
  return out;
}

/** url.validEncoded. */
function validEncoded(s: string, mode: Encoding): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if ('!$&\'()*+,;=:@[]%'.includes(c)) continue;
    if (shouldEscape(c.charCodeAt(0), mode)) return false;
  }
  return true;
}

function getScheme(raw: string): { scheme: string; rest: string } {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (/[a-zA-Z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) return { scheme: '', rest: raw };
      continue;
    }
    if (c === ':') {
      if (i === 0) throw new GoUrlError('missing protocol scheme');
      return { scheme: raw.slice(0, i), rest: raw.slice(i + 1) };
    }
    return { scheme: '', rest: raw };
  }
  return { scheme: '', rest: raw };
}

function validOptionalPort(port: string): boolean {
  return port === '' || /^:[0-9]*$/.test(port);
}

function parseHost(host: string): string {
  if (host.startsWith('[')) {
    const end = host.lastIndexOf(']');
    if (end < 0) throw new GoUrlError('missing \']\' in host');
    if (!validOptionalPort(host.slice(end + 1))) throw new GoUrlError('invalid port after host');
  } else {
    const colon = host.lastIndexOf(':');
    if (colon >= 0 && !validOptionalPort(host.slice(colon))) throw new GoUrlError('invalid port after host');
  }
  return unescape(host, 'host');
}

/** url.Parse; throws where Go returns an error. */
export function parseGoUrl(raw: string): GoUrl {
  const hash = raw.indexOf('#');
  const beforeFragment = hash < 0 ? raw : raw.slice(0, hash);
  const rawFragment = hash < 0 ? '' : raw.slice(hash + 1);
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(beforeFragment)) throw new GoUrlError('invalid control character in URL');
  const url: GoUrl = { scheme: '', opaque: '', host: '', path: '', rawPath: '', forceQuery: false, rawQuery: '', fragment: '', rawFragment: '' };
  if (beforeFragment === '*') {
    url.path = '*';
  } else if (beforeFragment !== '') {
    const { scheme, rest: afterScheme } = getScheme(beforeFragment);
    url.scheme = scheme.toLowerCase();
    let rest = afterScheme;
    if (rest.endsWith('?') && rest.split('?').length === 2) {
      url.forceQuery = true;
      rest = rest.slice(0, -1);
    } else {
      const question = rest.indexOf('?');
      if (question >= 0) {
        url.rawQuery = rest.slice(question + 1);
        rest = rest.slice(0, question);
      }
    }
    if (!rest.startsWith('/')) {
      if (url.scheme !== '') {
        url.opaque = rest;
        return withFragment(url, rawFragment);
      }
      const slash = rest.indexOf('/');
      if ((slash < 0 ? rest : rest.slice(0, slash)).includes(':')) throw new GoUrlError('first path segment in URL cannot contain colon');
    }
    if ((url.scheme !== '' || !rest.startsWith('///')) && rest.startsWith('//')) {
      const afterSlashes = rest.slice(2);
      const slash = afterSlashes.indexOf('/');
      const authority = slash < 0 ? afterSlashes : afterSlashes.slice(0, slash);
      rest = slash < 0 ? '' : afterSlashes.slice(slash);
      const at = authority.lastIndexOf('@');
      if (at >= 0) url.user = authority.slice(0, at);
      url.host = parseHost(at < 0 ? authority : authority.slice(at + 1));
    }
    url.path = unescape(rest, 'path');
    url.rawPath = escape(url.path, 'path') === rest ? '' : rest;
  }
  return withFragment(url, rawFragment);
}

function withFragment(url: GoUrl, rawFragment: string): GoUrl {
  url.fragment = unescape(rawFragment, 'fragment');
  url.rawFragment = escape(url.fragment, 'fragment') === rawFragment ? '' : rawFragment;
  return url;
}

function escapedPath(url: GoUrl): string {
  if (url.rawPath !== '' && validEncoded(url.rawPath, 'path')) {
    try {
      if (unescape(url.rawPath, 'path') === url.path) return url.rawPath;
    } catch {
      // Fall through to the default escaping, as Go does.
    }
  }
  if (url.path === '*') return '*';
  return escape(url.path, 'path');
}

function escapedFragment(url: GoUrl): string {
  if (url.rawFragment !== '' && validEncoded(url.rawFragment, 'fragment')) {
    try {
      if (unescape(url.rawFragment, 'fragment') === url.fragment) return url.rawFragment;
    } catch {
      // As above.
    }
  }
  return escape(url.fragment, 'fragment');
}

/** URL.String. */
export function formatGoUrl(url: GoUrl): string {
  let out = '';
  if (url.scheme !== '') out += `${url.scheme}:`;
  if (url.opaque !== '') {
    out += url.opaque;
  } else {
    if (url.scheme !== '' || url.host !== '' || url.user !== undefined) {
      if (url.host !== '' || url.path !== '' || url.user !== undefined) out += '//';
      if (url.user !== undefined) out += `${url.user}@`;
      if (url.host !== '') out += escape(url.host, 'host');
    }
    const path = escapedPath(url);
    if (path !== '' && !path.startsWith('/') && url.host !== '') out += '/';
    if (out === '') {
      const slash = path.indexOf('/');
      if ((slash < 0 ? path : path.slice(0, slash)).includes(':')) out += './';
    }
    out += path;
  }
  if (url.forceQuery || url.rawQuery !== '') out += `?${url.rawQuery}`;
  if (url.fragment !== '') out += `#${escapedFragment(url)}`;
  return out;
}

/** path.Clean. */
export function cleanPath(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const out: string[] = [];
  for (const segment of p.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!rooted) out.push('..');
      continue;
    }
    out.push(segment);
  }
  const joined = out.join('/');
  if (rooted) return `/${joined}`;
  return joined === '' ? '.' : joined;
}

/** path.Join: the non-empty elements joined by '/', cleaned; '' when all are empty. */
export function joinPath(...elements: string[]): string {
  const parts = elements.filter((e) => e !== '');
  return parts.length === 0 ? '' : cleanPath(parts.join('/'));
}

/** A path's bytes with its %-escapes decoded (url.PathUnescape); undefined when an escape is malformed. */
export function unescapeGoPath(escaped: string): string | undefined {
  try {
    return unescape(escaped, 'path');
  } catch {
    return undefined;
  }
}
