import { expect } from 'chai';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { AuditLogFile } from '../../../../src/audit';

describe('audit: the log file and its rotation (--audit-log-max*)', () => {
  let dir: string;
  let now: Date;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'audit-log-'));
    now = new Date('2022-09-01T10:00:00.000Z');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const line = (n: number) => `{"n":${n},"pad":"${'x'.repeat(300 * 1024)}"}`;
  const open = (extra: Partial<ConstructorParameters<typeof AuditLogFile>[0]> = {}) => {
    const file = new AuditLogFile({ path: join(dir, 'audit.log'), maxSizeMb: 1, maxBackups: 0, maxAgeDays: 0, compress: false, now: () => now, ...extra });
    file.open();
    return file;
  };

  it('appends one line per event to a file only its owner can read, after what was there', () => {
    writeFileSync(join(dir, 'audit.log'), '{"old":true}\n');
    const file = open();
    file.write('{"a":1}');
    file.write('{"b":2}');
    file.close();
    expect(readFileSync(join(dir, 'audit.log'), 'utf8')).to.equal('{"old":true}\n{"a":1}\n{"b":2}\n');
    const created = open({ path: join(dir, 'new.log') });
    created.close();
    expect(statSync(join(dir, 'new.log')).mode & 0o777).to.equal(0o600);
  });

  it('rotates before a line would pass maxsize, naming the backup by the UTC time', () => {
    const file = open();
    for (let n = 0; n < 4; n++) file.write(line(n));
    file.close();
    const backups = readdirSync(dir).filter((n) => n !== 'audit.log');
    expect(backups).to.deep.equal(['audit-2022-09-01T10-00-00.000.log']);
    expect(readFileSync(join(dir, backups[0]), 'utf8').split('\n').filter((l) => l !== '')).to.have.length(3);
    expect(JSON.parse(readFileSync(join(dir, 'audit.log'), 'utf8')).n).to.equal(3);
  });

  it('keeps at most maxbackup backups, the newest', () => {
    const file = open({ maxBackups: 2 });
    for (let n = 0; n < 12; n++) {
      now = new Date(now.getTime() + 1000);
      file.write(line(n));
    }
    file.close();
    expect(readdirSync(dir).filter((n) => n !== 'audit.log')).to.deep.equal(['audit-2022-09-01T10-00-07.000.log', 'audit-2022-09-01T10-00-10.000.log']);
  });

  it('removes backups older than maxage days', () => {
    writeFileSync(join(dir, 'audit-2022-08-01T00-00-00.000.log'), 'old\n');
    writeFileSync(join(dir, 'audit-2022-08-31T00-00-00.000.log'), 'recent\n');
    const file = open({ maxAgeDays: 7 });
    for (let n = 0; n < 4; n++) file.write(line(n));
    file.close();
    expect(existsSync(join(dir, 'audit-2022-08-01T00-00-00.000.log'))).to.equal(false);
    expect(existsSync(join(dir, 'audit-2022-08-31T00-00-00.000.log'))).to.equal(true);
  });

  it('gzips backups with compress', () => {
    const file = open({ compress: true });
    for (let n = 0; n < 4; n++) file.write(line(n));
    file.close();
    const backup = join(dir, 'audit-2022-09-01T10-00-00.000.log.gz');
    expect(gunzipSync(readFileSync(backup)).toString().split('\n')[0]).to.equal(line(0));
  });

  it('refuses a path that cannot be opened at start', () => {
    writeFileSync(join(dir, 'blocker'), '');
    expect(() => new AuditLogFile({ path: join(dir, 'blocker', 'audit.log'), maxSizeMb: 0, maxBackups: 0, maxAgeDays: 0, compress: false }).open()).to.throw('opening the audit log');
  });
});
