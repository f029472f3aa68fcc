/**
 * The status page (/status) of a three-replica cluster on loopback, in a real browser: Debian's
 * chromium driven by playwright-core (which downloads no browser). The page is behind
 * authentication and RBAC: anonymous and an authenticated user without a grant get 403; a user
 * bound to a ClusterRole with nonResourceURLs /status and /status/* sees it. Through a leader
 * kill the test asserts what the page shows and takes screenshots: before (the leader's page:
 * three members, each follower's lag and round trip), during (the new leader's page: the killed
 * member does not answer, the leader change listed; the old leader's page says its replica does
 * not answer) and after (the killed member back, answering). Screenshots go to
 * $CARINA_STATUS_SCREENSHOTS_DIR when set (bench/reports/status-page/ holds a run's), else to a
 * temporary directory. Needs chromium (test/support/install-test-deps.sh).
 */
import { expect } from 'chai';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CarinaApiProcess } from '../support/carina-api-process';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text';
import { until } from '../support/until';

const CHROMIUM = '/usr/bin/chromium';
const STATUS_READER_TOKEN = 'status-reader-token-0123456789';
const PLAIN_USER_TOKEN = 'plain-user-token-0123456789';

describe('the status page in a real browser (three replicas, a leader kill)', function () {
  this.timeout(300_000);
  const dir = mkdtempSync(join(tmpdir(), 'carina-status-page-'));
  const shots = process.env.CARINA_STATUS_SCREENSHOTS_DIR !== undefined && process.env.CARINA_STATUS_SCREENSHOTS_DIR !== '' ? process.env.CARINA_STATUS_SCREENSHOTS_DIR : join(dir, 'screenshots');
  let replicas: CarinaApiProcess[] = [];
  let browser: Browser | undefined;

  before(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run test/support/install-test-deps.sh`);
    mkdirSync(shots, { recursive: true });
    const tokens = join(dir, 'tokens.csv');
    writeFileSync(tokens, `${STATUS_READER_TOKEN},status-reader,1001,\n${PLAIN_USER_TOKEN},plain-user,1002,\n`);
    replicas = await CarinaApiProcess.startCluster(3, ['--token-auth-file', tokens]);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  });

  after(async () => {
    await browser?.close();
    await Promise.all(replicas.map((r) => r.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  async function leaderOf(among: CarinaApiProcess[]): Promise<CarinaApiProcess> {
    return until('a leader', async () => {
      for (const replica of among) {
        const metrics = await replica.request('GET', '/metrics');
        if (sampleValue(parsePrometheusText(metrics.text), 'etcd_server_is_leader') === 1) return replica;
      }
      return null;
    }, 30_000);
  }

  async function openPage(replica: CarinaApiProcess): Promise<Page> {
    const context = await (browser as Browser).newContext({ ignoreHTTPSErrors: true, extraHTTPHeaders: { Authorization: `Bearer ${STATUS_READER_TOKEN}` }, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const response = await page.goto(`https://127.0.0.1:${replica.port}/status`);
    expect(response?.status()).to.equal(200);
    await page.waitForSelector('body[data-state="live"]', { timeout: 15_000 });
    return page;
  }

  /** The members table as text, row by row. */
  async function members(page: Page): Promise<string[][]> {
    return page.$$eval('#members tr', (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent ?? '')));
  }

  it('is behind authentication and an RBAC rule v1.25\'s default policy grants no one', async () => {
    const replica = replicas[0];
    const anonymous = await replica.request('GET', '/status', { anonymous: true });
    expect(anonymous.status, anonymous.text).to.equal(403);
    const plain = await replica.request('GET', '/status', { anonymous: true, headers: { Authorization: `Bearer ${PLAIN_USER_TOKEN}` } });
    expect(plain.status, plain.text).to.equal(403);
    expect(plain.json<{ message: string }>().message).to.equal('forbidden: User "plain-user" cannot get path "/status"');
    const role = await replica.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: JSON.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'carina-status-reader' }, rules: [{ nonResourceURLs: ['/status', '/status/*'], verbs: ['get'] }] }) });
    expect(role.status, role.text).to.equal(201);
    const binding = await replica.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { body: JSON.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'carina-status-reader' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'carina-status-reader' }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'status-reader' }] }) });
    expect(binding.status, binding.text).to.equal(201);
    for (const r of replicas) {
      const page = await until('the grant to reach every replica', async () => {
        const answer = await r.request('GET', '/status', { anonymous: true, headers: { Authorization: `Bearer ${STATUS_READER_TOKEN}` } });
        return answer.status === 200 ? answer : null;
      });
      expect(page.headers['content-type']).to.equal('text/html; charset=utf-8');
      expect(String(page.headers['content-security-policy'])).to.match(/^default-src 'none'; script-src 'sha256-[^']+'; style-src 'sha256-[^']+'; connect-src 'self'/);
      // No external asset: nothing is loaded from anywhere but the page itself.
      expect(page.text).to.not.match(/(?:src|href)=["']?(?:https?:)?\/\//);
      const data = await r.request('GET', '/status/data', { anonymous: true, headers: { Authorization: `Bearer ${STATUS_READER_TOKEN}` } });
      expect(data.status).to.equal(200);
    }
  });

  it('shows the members, the leader, lags and round trips, and follows a leader kill', async () => {
    const leader = await leaderOf(replicas);
    const leaderId = replicas.indexOf(leader) + 1;
    const write = async (replica: CarinaApiProcess, name: string) => {
      const created = await replica.request('POST', '/api/v1/namespaces/default/configmaps', { body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }) });
      expect(created.status, created.text).to.equal(201);
    };
    for (let i = 0; i < 10; i++) await write(leader, `status-before-${i}`);
    const before = await openPage(leader);
    await until('the leader\'s page to show both followers\' round trips', async () => {
      const rows = await members(before);
      return rows.length === 3 && rows.filter((r) => r[4].endsWith(' ms')).length === 2;
    });
    expect(await before.textContent('#role')).to.equal('leader');
    expect(await before.textContent('#leader')).to.equal(`member ${leaderId}`);
    const beforeRows = await members(before);
    expect(beforeRows.map((r) => r[2]).sort()).to.deep.equal(['follower', 'follower', 'leader']);
    expect(beforeRows.find((r) => r[0] === `${leaderId} (this)`)?.[2]).to.equal('leader');
    expect(Number(await before.textContent('#commit'))).to.be.greaterThan(10);
    await until('the request table to show the POSTs', async () => (await before.textContent('#requests'))?.includes('POST'));
    await before.screenshot({ path: join(shots, 'before.png'), fullPage: true });

    await leader.killAndWait('SIGKILL');
    const survivors = replicas.filter((r) => r !== leader);
    const next = await leaderOf(survivors);
    const nextId = replicas.indexOf(next) + 1;
    for (let i = 0; i < 5; i++) await write(next, `status-during-${i}`);
    const during = await openPage(next);
    await until('the new leader\'s page to show the killed member not answering', async () => {
      const row = (await members(during)).find((r) => r[0] === String(leaderId));
      return row !== undefined && row[4].startsWith('no answer for');
    });
    expect(await during.textContent('#role')).to.equal('leader');
    expect(await during.textContent('#events')).to.contain(`member ${nextId} leads`);
    expect(await during.textContent('#events')).to.contain(`member ${leaderId} does not answer heartbeats`);
    await during.screenshot({ path: join(shots, 'during.png'), fullPage: true });
    // The killed leader's own page, still open: it says its replica does not answer.
    await until('the old leader\'s page to go stale', async () => (await before.getAttribute('body', 'data-state')) === 'stale');
    expect(await before.textContent('#stale')).to.contain('This replica does not answer');
    await before.screenshot({ path: join(shots, 'during-old-leader.png'), fullPage: true });

    await leader.launch();
    await until('the restarted member to answer again on the leader\'s page', async () => {
      const row = (await members(during)).find((r) => r[0] === String(leaderId));
      return row !== undefined && row[4].endsWith(' ms') && row[3] === '0';
    }, 60_000);
    expect(await during.textContent('#events')).to.not.contain('does not answer');
    expect(await during.textContent('#events')).to.match(new RegExp(`member ${leaderId} did not answer heartbeats for \\d+\\.\\d s`));
    await during.screenshot({ path: join(shots, 'after.png'), fullPage: true });
  });
});
