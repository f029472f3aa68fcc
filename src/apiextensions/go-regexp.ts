/**
 * Go regular expressions for the `pattern` of CRD schemas. kube-apiserver v1.25 checks a pattern
 * with Go's `regexp.Compile` when a CRD is written (apiextensions-apiserver pkg/apiserver/schema
 * validation.go, "must be a valid regular expression, but isn't: <error>") and kube-openapi matches
 * values with `MatchString` (an unanchored search). Both read RE2 syntax as Go does: `(?i)`,
 * `\z`, `[[:alpha:]]`, `\pL` are valid; backreferences and lookaround are not. JavaScript's RegExp
 * reads another language, so patterns go through re2js, a port of RE2 with Go's syntax and
 * error texts ("error parsing regexp: invalid escape sequence: `\1`").
 *
 * One difference is mended here: re2js follows Go 1.22, which reads `(?<name>expr)` as a named
 * group; v1.25 is built with Go 1.19, whose parser stops at `(?<` ("invalid or unsupported Perl
 * syntax"). When a pattern has both that and another error, Go reports whichever comes first and
 * this module always reports `(?<`.
 */
import { RE2JS } from 're2js';

/** A compiled pattern: `matches` is Go's `MatchString`, true when any substring matches. */
export interface GoRegexp {
  matches(value: string): boolean;
}

export type GoRegexpCompilation = { ok: true; regexp: GoRegexp } | { ok: false; message: string };

/** regexp.Compile: the compiled pattern, or Go's error text. Linear-time matching (RE2). */
export function compileGoRegexp(pattern: string): GoRegexpCompilation {
  if (hasAngleGroup(pattern)) return { ok: false, message: 'error parsing regexp: invalid or unsupported Perl syntax: `(?<`' };
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (err) {
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  return { ok: true, regexp: { matches: (value) => compiled.matcher(value).find() } };
}

/** True when the parser would meet `(?<` as a group opening: outside `\Q...\E`, escapes and classes. */
function hasAngleGroup(pattern: string): boolean {
  let i = 0;
  while (i < pattern.length) {
    const ch = pattern[i];
    if (ch === '\\') {
      if (pattern[i + 1] === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        i = end < 0 ? pattern.length : end + 2;
      } else {
        i += 2;
      }
    } else if (ch === '[') {
      i = endOfClass(pattern, i);
    } else if (ch === '(' && pattern.startsWith('?<', i + 1)) {
      return true;
    } else {
      i++;
    }
  }
  return false;
}

/** The index after the class opened at `start` (a `]` right after `[` or `[^` is a literal). */
function endOfClass(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '^') i++;
  if (pattern[i] === ']') i++;
  while (i < pattern.length) {
    if (pattern[i] === '\\') {
      i += 2;
    } else if (pattern.startsWith('[:', i)) {
      const end = pattern.indexOf(':]', i + 2);
      i = end < 0 ? i + 1 : end + 2;
    } else if (pattern[i] === ']') {
      return i + 1;
    } else {
      i++;
    }
  }
  return i;
}
