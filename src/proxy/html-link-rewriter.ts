/**
 * The links of a proxied text/html body, rewritten as kube's proxy transport rewrites them
 * (apimachinery pkg/util/proxy/transport.go rewriteHTML, over golang.org/x/net/html's
 * tokenizer): every start tag is printed again as Go's Token.String prints it (names in lower
 * case, each attribute as key="value" with &'<>"\r escaped, character references decoded), and
 * the URL attributes of its table (href of a, link, area and base; src of img, script, iframe,
 * ...; action of form; and the rest of atomsToAttrs) go through `rewrite`. Everything else
 * (text, end tags, comments, doctypes, the content of script, style, textarea, title and the
 * other raw-text elements) passes byte for byte. As with Go's tokenizer, a start or end tag cut
 * off by the end of the body is dropped.
 *
 * Unlike kube, which reads the whole body into memory first, this works on the stream: what is
 * held back is at most one unfinished token (bounded by `maxTokenBytes`; a longer one ends the
 * rewriting and the rest passes as it is).
 *
 * Known differences, chosen to never corrupt a page: a start tag whose attributes hold a named
 * character reference with ';' that is not among the HTML 4 ones known here is passed as it was
 * (Go would decode it from the full HTML5 table); in a script, the end tag is the first
 * `</script` followed by a space, '/' or '>', without the HTML5 escaped-script states.
 *
 * Strings are byte strings (latin1: one char per byte): Go treats the body as bytes, and so do
 * we, so bytes that are not UTF-8 pass untouched.
 */

/** atomsToAttrs: which attributes of which tags hold a URL. */
const URL_ATTRIBUTES: ReadonlyMap<string, ReadonlySet<string>> = new Map(Object.entries({
  a: ['href'], applet: ['codebase'], area: ['href'], audio: ['src'], base: ['href'], blockquote: ['cite'], body: ['background'], button: ['formaction'],
  command: ['icon'], del: ['cite'], embed: ['src'], form: ['action'], frame: ['longdesc', 'src'], head: ['profile'], html: ['manifest'],
  iframe: ['longdesc', 'src'], img: ['longdesc', 'src', 'usemap'], input: ['src', 'usemap', 'formaction'], ins: ['cite'], link: ['href'],
  object: ['classid', 'codebase', 'data', 'usemap'], q: ['cite'], script: ['src'], source: ['src'], video: ['poster', 'src'],
}).map(([tag, attributes]) => [tag, new Set(attributes)]));

/** Elements whose content the tokenizer reads as raw text up to their end tag. */
const RAW_TEXT_ELEMENTS = new Set(['iframe', 'noembed', 'noframes', 'noscript', 'plaintext', 'script', 'style', 'textarea', 'title', 'xmp']);

const WHITESPACE = new Set([' ', '\n', '\r', '\t', '\f']);

/** The HTML 4 Latin-1 references, U+00A0 to U+00FF in order: the ones HTML also knows without ';'. */
const LATIN1_NAMES = ('nbsp iexcl cent pound curren yen brvbar sect uml copy ordf laquo not shy reg macr deg plusmn sup2 sup3 acute micro para middot cedil ' +
  'sup1 ordm raquo frac14 frac12 frac34 iquest Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ' +
  'ETH Ntilde Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig agrave aacute acirc atilde auml aring aelig ' +
  'ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml divide oslash ugrave uacute ucirc uuml ' +
  'yacute thorn yuml').split(' ');

/** Named references without ';' that HTML decodes (the legacy ones), with their code points. */
const LEGACY_REFERENCES: ReadonlyMap<string, number> = new Map([
  ...LATIN1_NAMES.map((name, i): [string, number] => [name, 0xa0 + i]),
  ['amp', 38], ['AMP', 38], ['lt', 60], ['LT', 60], ['gt', 62], ['GT', 62], ['quot', 34], ['QUOT', 34], ['COPY', 0xa9], ['REG', 0xae],
]);

/** Named references with ';' known here: the legacy ones and apos. */
const REFERENCES: ReadonlyMap<string, number> = new Map([...[...LEGACY_REFERENCES].map(([name, code]): [string, number] => [`${name};`, code]), ['apos;', 39]]);

/** Windows-1252's characters for numeric references 0x80 to 0x9F, as HTML maps them. */
const WINDOWS_1252 = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];

function isLetter(c: string | undefined): boolean {
  return c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
}

function isAlphanumeric(c: string | undefined): boolean {
  return isLetter(c) || (c !== undefined && c >= '0' && c <= '9');
}

/** Go's bytes lower: ASCII only. */
function lowerAscii(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** A code point as the UTF-8 bytes Go writes for it, one char per byte. */
function utf8Bytes(codePoint: number): string {
  return Buffer.from(String.fromCodePoint(codePoint), 'utf8').toString('latin1');
}

/** Unknown: a named reference this table cannot decode where Go's might. */
const UNKNOWN_REFERENCE = Symbol('unknown reference');

/** html.unescape(b, attribute=true), after convertNewlines; UNKNOWN_REFERENCE when a reference is beyond this table. */
function decodeAttributeValue(raw: string): string | typeof UNKNOWN_REFERENCE {
  const value = raw.replace(/\r\n?/g, '\n');
  if (!value.includes('&')) return value;
  let out = '';
  let at = 0;
  while (at < value.length) {
    const amp = value.indexOf('&', at);
    if (amp < 0) {
      out += value.slice(at);
      break;
    }
    out += value.slice(at, amp);
    const s = value.slice(amp);
    if (s.length <= 1) {
      out += '&';
      at = amp + 1;
      continue;
    }
    if (s[1] === '#') {
      if (s.length <= 3) {
        out += '&';
        at = amp + 1;
        continue;
      }
      let i = 2;
      const hex = s[i] === 'x' || s[i] === 'X';
      if (hex) i++;
      let code = 0;
      while (i < s.length) {
        const c = s[i];
        i++;
        const digit = hex ? (/[0-9a-fA-F]/.test(c) ? parseInt(c, 16) : -1) : (/[0-9]/.test(c) ? Number(c) : -1);
        if (digit >= 0) {
          code = Math.min(code * (hex ? 16 : 10) + digit, 0x110000);
          continue;
        }
        if (c !== ';') i--;
        break;
      }
      if (i <= 3) {
        out += '&';
        at = amp + 1;
        continue;
      }
      if (code >= 0x80 && code <= 0x9f) code = WINDOWS_1252[code - 0x80];
      else if (code === 0 || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) code = 0xfffd;
      out += utf8Bytes(code);
      at = amp + i;
      continue;
    }
    let i = 1;
    while (i < s.length) {
      const c = s[i];
      i++;
      if (isAlphanumeric(c)) continue;
      if (c !== ';') i--;
      break;
    }
    const name = s.slice(1, i);
    if (name === '' || (!name.endsWith(';') && s[i] === '=')) {
      out += s.slice(0, i);
    } else if (name.endsWith(';')) {
      const code = REFERENCES.get(name);
      if (code === undefined) return UNKNOWN_REFERENCE;
      out += utf8Bytes(code);
    } else {
      const code = LEGACY_REFERENCES.get(name);
      out += code === undefined ? s.slice(0, i) : utf8Bytes(code);
    }
    at = amp + i;
  }
  return out;
}

/** Go html's escape: the five characters of an attribute value, and \r. */
function escapeAttribute(value: string): string {
  return value.replace(/[&'<>"\r]/g, (c) => ({ '&': '&amp;', '\'': '&#39;', '<': '&lt;', '>': '&gt;', '"': '&#34;', '\r': '&#13;' })[c] as string);
}

interface ScannedTag {
  /** Index just after the tag's '>'. */
  end: number;
  name: string;
  /** Keys and raw values, as the tokenizer saved them (attributes with an empty key are not). */
  attributes: Array<[string, string]>;
}

function skipWhitespace(s: string, at: number): number {
  while (at < s.length && WHITESPACE.has(s[at])) at++;
  return at;
}

/**
 * readTag from the first letter of a tag's name (`nameStart`); undefined when the buffer ends
 * before the tag does.
 */
function scanTag(s: string, nameStart: number): ScannedTag | undefined {
  let i = nameStart + 1;
  let nameEnd: number;
  for (;;) {
    if (i >= s.length) return undefined;
    const c = s[i];
    if (WHITESPACE.has(c)) {
      nameEnd = i;
      i++;
      break;
    }
    if (c === '/' || c === '>') {
      nameEnd = i;
      break;
    }
    i++;
  }
  const attributes: Array<[string, string]> = [];
  i = skipWhitespace(s, i);
  for (;;) {
    if (i >= s.length) return undefined;
    if (s[i] === '>') return { end: i + 1, name: s.slice(nameStart, nameEnd), attributes };
    const keyStart = i;
    let keyEnd: number;
    for (;;) {
      if (i >= s.length) return undefined;
      const c = s[i];
      i++;
      if (WHITESPACE.has(c) || c === '/') {
        keyEnd = i - 1;
        break;
      }
      // An '=' before the name has begun is part of the name.
      if (c === '=' && keyStart + 1 === i) continue;
      if (c === '=' || c === '>') {
        i--;
        keyEnd = i;
        break;
      }
    }
    let valueStart = i;
    let valueEnd = i;
    i = skipWhitespace(s, i);
    if (i >= s.length) return undefined;
    if (s[i] === '=') {
      i = skipWhitespace(s, i + 1);
      if (i >= s.length) return undefined;
      const quote = s[i];
      if (quote === '"' || quote === '\'') {
        const close = s.indexOf(quote, i + 1);
        if (close < 0) return undefined;
        valueStart = i + 1;
        valueEnd = close;
        i = close + 1;
      } else if (quote !== '>') {
        valueStart = i;
        for (;;) {
          if (i >= s.length) return undefined;
          if (WHITESPACE.has(s[i])) {
            valueEnd = i;
            i++;
            break;
          }
          if (s[i] === '>') {
            valueEnd = i;
            break;
          }
          i++;
        }
      }
    }
    if (keyEnd > keyStart) attributes.push([s.slice(keyStart, keyEnd), s.slice(valueStart, valueEnd)]);
    i = skipWhitespace(s, i);
  }
}

/** Token.String of a start tag with its URL attributes rewritten; undefined to keep it as it was. */
function printStartTag(tag: ScannedTag, selfClosing: boolean, rewrite: (url: string) => string): string | undefined {
  const name = lowerAscii(tag.name);
  const urlAttributes = URL_ATTRIBUTES.get(name);
  let out = `<${name}`;
  for (const [rawKey, rawValue] of tag.attributes) {
    const key = lowerAscii(rawKey);
    const decoded = decodeAttributeValue(rawValue);
    if (decoded === UNKNOWN_REFERENCE) return undefined;
    const value = urlAttributes?.has(key) === true ? rewrite(decoded) : decoded;
    out += ` ${key}="${escapeAttribute(value)}"`;
  }
  return `${out}${selfClosing ? '/>' : '>'}`;
}

/** Where `</rawTag` followed by whitespace, '/' or '>' starts at or after `from`; -1 if not in the buffer. */
function rawTextEnd(s: string, from: number, rawTag: string): number {
  const lower = s.toLowerCase();
  for (let at = lower.indexOf(`</${rawTag}`, from); at >= 0; at = lower.indexOf(`</${rawTag}`, at + 1)) {
    const next = s[at + 2 + rawTag.length];
    if (next !== undefined && (WHITESPACE.has(next) || next === '/' || next === '>')) return at;
  }
  return -1;
}

/** Where a comment that starts at `start` ("<!--") ends, or -1 if not in the buffer (readComment). */
function commentEnd(s: string, start: number): number {
  let dashes = 0;
  let beginning = true;
  for (let i = start + 4; i < s.length; i++) {
    const c = s[i];
    if (c === '-') {
      dashes++;
      continue;
    }
    if (c === '>' && (dashes >= 2 || beginning)) return i + 1;
    if (c === '!' && dashes >= 2) {
      if (i + 1 >= s.length) return -1;
      if (s[i + 1] === '>') return i + 2;
      if (s[i + 1] === '-') {
        i++;
        dashes = 1;
        beginning = false;
        continue;
      }
    }
    dashes = 0;
    beginning = false;
  }
  return -1;
}

export interface HtmlLinkRewriterOptions {
  rewrite: (url: string) => string;
  /** The longest token held back while waiting for its end (default 1 MiB). */
  maxTokenBytes?: number;
}

/** Rewrites an HTML body chunk by chunk: `push` each chunk, then `end`; each returns the bytes ready to send. */
export class HtmlLinkRewriter {
  private pending = '';
  /** The raw-text element whose end tag is awaited ('' when none). */
  private rawTag = '';
  private passthrough = false;
  private readonly maxTokenBytes: number;

  constructor(private readonly options: HtmlLinkRewriterOptions) {
    this.maxTokenBytes = options.maxTokenBytes ?? 1024 * 1024;
  }

  push(chunk: Buffer): Buffer {
    if (this.passthrough) return chunk;
    this.pending += chunk.toString('latin1');
    const out = this.drain(false);
    if (this.pending.length > this.maxTokenBytes) {
      // One token longer than the limit: stop rewriting, send the rest as it comes.
      this.passthrough = true;
      const rest = this.pending;
      this.pending = '';
      return Buffer.from(out + rest, 'latin1');
    }
    return Buffer.from(out, 'latin1');
  }

  end(): Buffer {
    if (this.passthrough) return Buffer.alloc(0);
    const out = this.drain(true);
    this.pending = '';
    return Buffer.from(out, 'latin1');
  }

  /** Tokenizes what is pending; keeps the unfinished token (unless at the end of the body). */
  private drain(atEnd: boolean): string {
    const s = this.pending;
    let out = '';
    let at = 0;
    while (at < s.length) {
      if (this.rawTag !== '') {
        const end = this.rawTag === 'plaintext' ? -1 : rawTextEnd(s, at, this.rawTag);
        if (end < 0) {
          // Send what cannot belong to the end tag; keep a tail that might.
          const keep = atEnd ? s.length : Math.max(at, s.length - (this.rawTag.length + 3));
          out += s.slice(at, keep);
          at = keep;
          break;
        }
        out += s.slice(at, end);
        at = end;
        this.rawTag = '';
        continue;
      }
      const lt = s.indexOf('<', at);
      if (lt < 0) {
        out += s.slice(at);
        at = s.length;
        break;
      }
      out += s.slice(at, lt);
      at = lt;
      const next = s[at + 1];
      if (next === undefined) {
        if (atEnd) {
          out += '<';
          at++;
        }
        break;
      }
      if (isLetter(next)) {
        const tag = scanTag(s, at + 1);
        if (tag === undefined) {
          if (atEnd) at = s.length;
          break;
        }
        const selfClosing = s[tag.end - 2] === '/';
        out += printStartTag(tag, selfClosing, this.options.rewrite) ?? s.slice(at, tag.end);
        at = tag.end;
        const name = lowerAscii(tag.name);
        if (RAW_TEXT_ELEMENTS.has(name)) this.rawTag = name;
        continue;
      }
      let end: number;
      if (next === '/') {
        const third = s[at + 2];
        if (third === undefined) {
          if (atEnd) {
            out += s.slice(at);
            at = s.length;
          }
          break;
        }
        if (third === '>') end = at + 3;
        else if (isLetter(third)) {
          const tag = scanTag(s, at + 2);
          if (tag === undefined) {
            if (atEnd) at = s.length;
            break;
          }
          end = tag.end;
        } else end = s.indexOf('>', at + 2) + 1;
      } else if (next === '!') {
        if (s.length < at + 4 && !atEnd) break;
        end = s.startsWith('<!--', at) ? commentEnd(s, at) : s.indexOf('>', at + 2) + 1;
      } else if (next === '?') {
        end = s.indexOf('>', at + 2) + 1;
      } else {
        out += '<';
        at++;
        continue;
      }
      if (end <= 0) {
        // A comment, doctype or bogus comment not closed yet; at the end of the body it runs to the end.
        if (atEnd) {
          out += s.slice(at);
          at = s.length;
        }
        break;
      }
      out += s.slice(at, end);
      at = end;
    }
    this.pending = s.slice(at);
    return out;
  }
}
