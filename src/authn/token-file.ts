/**
 * Static bearer tokens (`--token-auth-file`; apiserver
 * pkg/authentication/token/tokenfile/tokenfile.go).
 *
 * The file is CSV as Go's encoding/csv reads it with a variable number of fields: `token,user,
 * uid[,"group1,group2"]`; fields may be double-quoted (a quoted field may hold commas, line
 * breaks and `""` for a quote); a bare quote inside an unquoted field is an error; empty lines
 * are skipped; CRLF is read as LF. A record with fewer than 3 fields is an error naming its line.
 * A record with an empty token is skipped with a warning; a token seen again replaces the
 * earlier record, with a warning (v1.25 does both). The groups column is split on commas as is:
 * an empty fourth column gives one empty group name, as in v1.25.
 *
 * Tokens are held only as SHA-256 digests, and a presented token is looked up by its digest,
 * so the comparison never depends on how many leading characters of a secret match. Warnings
 * and errors name the file and line, never the token.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { AuthenticationResult, TokenAuthenticator } from './authenticator';
import { NOT_MINE } from './authenticator';
import { AuthnError, errorText, fileMessage } from './errors';
import type { UserInfo } from './user-info';

export interface CsvRecord {
  readonly fields: readonly string[];
  /** 1-based line on which the record starts. */
  readonly line: number;
}

/** A CSV reading error at `line` (Go: `parse error on line L, column C: what`). */
class CsvError extends Error {
  constructor(readonly line: number, readonly column: number, what: string) {
    super(`parse error on line ${line}, column ${column}: ${what}`);
  }
}

/** Records of `text` as Go's csv.Reader (FieldsPerRecord = -1, no comments, no trimming) reads them. */
export function parseCsv(text: string): CsvRecord[] {
  const input = text.replace(/\r\n/g, '\n');
  const records: CsvRecord[] = [];
  let position = 0;
  let line = 1;
  while (position < input.length) {
    if (input[position] === '\n') {
      position += 1;
      line += 1;
      continue;
    }
    const recordLine = line;
    const fields: string[] = [];
    for (;;) {
      let field = '';
      if (input[position] === '"') {
        const fieldLine = line;
        const fieldColumn = position - input.lastIndexOf('\n', position - 1);
        position += 1;
        for (;;) {
          if (position >= input.length) throw new CsvError(fieldLine, fieldColumn, 'extraneous or missing " in quoted-field');
          const char = input[position];
          if (char === '"') {
            if (input[position + 1] === '"') {
              field += '"';
              position += 2;
              continue;
            }
            position += 1;
            break;
          }
          if (char === '\n') line += 1;
          field += char;
          position += 1;
        }
        const next = input[position];
        if (next !== undefined && next !== ',' && next !== '\n') {
          throw new CsvError(line, position - input.lastIndexOf('\n', position - 1), 'extraneous or missing " in quoted-field');
        }
      } else {
        const start = position;
        while (position < input.length && input[position] !== ',' && input[position] !== '\n') {
          if (input[position] === '"') throw new CsvError(line, position - input.lastIndexOf('\n', position - 1), 'bare " in non-quoted-field');
          position += 1;
        }
        field = input.slice(start, position);
      }
      fields.push(field);
      if (input[position] === ',') {
        position += 1;
        continue;
      }
      break;
    }
    records.push({ fields, line: recordLine });
    if (input[position] === '\n') {
      position += 1;
      line += 1;
    }
  }
  return records;
}

export interface TokenFileWarning {
  readonly line: number;
  readonly message: string;
}

export function tokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('base64');
}

/** Static tokens, held by digest. Immutable once built. */
export class StaticTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'token-file';

  constructor(private readonly users: ReadonlyMap<string, UserInfo>, readonly warnings: readonly TokenFileWarning[] = []) {}

  get size(): number {
    return this.users.size;
  }

  async authenticateToken(token: string): Promise<AuthenticationResult> {
    const user = this.users.get(tokenDigest(token));
    return user === undefined ? NOT_MINE : { outcome: 'authenticated', user };
  }
}

/** The authenticator for the content of a token file; `source` names the file in messages. */
export function parseTokenFile(text: string, source: string): StaticTokenAuthenticator {
  let records: CsvRecord[];
  try {
    records = parseCsv(text);
  } catch (error) {
    const line = error instanceof CsvError ? error.line : undefined;
    throw new AuthnError('INVALID_TOKEN_FILE', fileMessage(source, line, errorText(error)), { file: source, line });
  }
  const users = new Map<string, UserInfo>();
  const warnings: TokenFileWarning[] = [];
  for (const record of records) {
    const [token, name, uid, groups] = record.fields;
    if (record.fields.length < 3) {
      throw new AuthnError(
        'INVALID_TOKEN_FILE',
        fileMessage(source, record.line, `token file must have at least 3 columns (token, user name, user uid), found ${record.fields.length}`),
        { file: source, line: record.line },
      );
    }
    if (token === '') {
      warnings.push({ line: record.line, message: fileMessage(source, record.line, 'empty token has been found in token file; the record is ignored') });
      continue;
    }
    const digest = tokenDigest(token);
    if (users.has(digest)) {
      warnings.push({ line: record.line, message: fileMessage(source, record.line, 'duplicate token has been found in token file; this record replaces the earlier one') });
    }
    users.set(digest, Object.freeze({
      name,
      uid,
      groups: Object.freeze(groups === undefined ? [] : groups.split(',')),
      extra: Object.freeze({}),
    }));
  }
  return new StaticTokenAuthenticator(users, warnings);
}

/** Reads `--token-auth-file`; AuthnError IO_ERROR or INVALID_TOKEN_FILE (with file and line). */
export async function loadTokenFile(file: string): Promise<StaticTokenAuthenticator> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    throw new AuthnError('IO_ERROR', fileMessage(file, undefined, `cannot read: ${errorText(error)}`), { file, cause: error });
  }
  return parseTokenFile(text, file);
}
