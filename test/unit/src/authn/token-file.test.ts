import { expect } from 'chai';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AuthnError } from '../../../../src/authn/errors';
import { loadTokenFile, parseCsv, parseTokenFile } from '../../../../src/authn/token-file';

function parseError(text: string): AuthnError {
  try {
    parseTokenFile(text, '/etc/tokens.csv');
  } catch (error) {
    if (error instanceof AuthnError) return error;
    throw error;
  }
  throw new Error('expected an AuthnError');
}

describe('authn: static token file', () => {
  it('reads CSV as Go\'s encoding/csv: quotes, doubled quotes, quoted line breaks, CRLF, empty lines', () => {
    const records = parseCsv('a,"b,c","say ""hi"""\r\n\r\n"multi\nline",x,y\nlast,1,2');
    expect(records).to.deep.equal([
      { fields: ['a', 'b,c', 'say "hi"'], line: 1 },
      { fields: ['multi\nline', 'x', 'y'], line: 3 },
      { fields: ['last', '1', '2'], line: 5 },
    ]);
  });

  it('authenticates token,user,uid with groups split on commas', async () => {
    const tokens = parseTokenFile('secret1,jane,1001,"dev,ops"\nsecret2,bob,1002\n', 'tokens.csv');
    expect(await tokens.authenticateToken('secret1')).to.deep.equal({ outcome: 'authenticated', user: { name: 'jane', uid: '1001', groups: ['dev', 'ops'], extra: {} } });
    expect(await tokens.authenticateToken('secret2')).to.deep.equal({ outcome: 'authenticated', user: { name: 'bob', uid: '1002', groups: [], extra: {} } });
    expect(await tokens.authenticateToken('secret3')).to.deep.equal({ outcome: 'not-mine' });
    expect(await tokens.authenticateToken('secret1 ')).to.deep.equal({ outcome: 'not-mine' });
  });

  it('refuses a record with fewer than 3 columns, naming file and line', () => {
    const error = parseError('ok,user,uid\nshort,user\n');
    expect(error.code).to.equal('INVALID_TOKEN_FILE');
    expect(error.line).to.equal(2);
    expect(error.message).to.equal('/etc/tokens.csv:2: token file must have at least 3 columns (token, user name, user uid), found 2');
  });

  it('refuses a bare quote and an unterminated quote, naming the line but never the token', () => {
    const bare = parseError('ok,user,uid\nsupersecret"x,user,uid\n');
    expect(bare.line).to.equal(2);
    expect(bare.message).to.include('bare "');
    expect(bare.message).to.not.include('supersecret');
    const open = parseError('"supersecret,user,uid\n');
    expect(open.message).to.include('extraneous or missing " in quoted-field');
    expect(open.message).to.not.include('supersecret');
  });

  it('warns about duplicate tokens (the last wins) and empty tokens, without the token', async () => {
    const tokens = parseTokenFile('dup-token,first,1\n,nobody,2\ndup-token,second,3\n', 'tokens.csv');
    expect(tokens.warnings.map((w) => w.line)).to.deep.equal([2, 3]);
    expect(tokens.warnings.map((w) => w.message).join('\n')).to.not.include('dup-token');
    const result = await tokens.authenticateToken('dup-token');
    expect(result.outcome === 'authenticated' && result.user.name).to.equal('second');
    expect(tokens.size).to.equal(1);
  });

  it('loads from a file, and reports a missing file as IO_ERROR', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'authn-tokens-'));
    try {
      const file = path.join(dir, 'tokens.csv');
      await fs.writeFile(file, 't,u,1\n');
      expect((await loadTokenFile(file)).size).to.equal(1);
      const error = await loadTokenFile(path.join(dir, 'missing.csv')).then(() => undefined, (e: unknown) => e);
      expect((error as AuthnError).code).to.equal('IO_ERROR');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
