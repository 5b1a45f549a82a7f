// The package page's "verified" mark, in Chromium against the real server: a record published
// through a real ID token exchange (a stand-in GitHub Actions issuer on 127.0.0.1, its token
// verified by the server) shows the mark, linking to the run, with the repository, ref and commit in
// its title and in the detail; a record published with a password login shows none.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT, PUBLIC_DIR } from '../../server/paths.js';
import { type ActionsIssuer, DEFAULT_JOB, startActionsIssuer } from '../helpers/actions-issuer.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { skipping } from '../helpers/skip.js';
import { type WatchedPage, browserAvailability, launchBrowser, openPage } from './browser.js';

const OUTPUT = path.join(PACKAGE_ROOT, 'test-output');
const RUN_URL = `https://github.com/${DEFAULT_JOB.repository}/actions/runs/${DEFAULT_JOB.runId}`;

const browserState = browserAvailability();
const skip = skipping('the verified mark tests', !browserState.available && !browserState.required ? browserState.reason : undefined);

describe.skipIf(skip)('the verified mark on the package page', () => {
  let browser: Browser;
  let server: TestServer;
  let actions: ActionsIssuer;
  let opened: WatchedPage[] = [];
  let verifiedUid: string;
  let plainUid: string;

  beforeAll(async () => {
    if (!browserState.available) throw new Error(browserState.reason);
    if (!existsSync(path.join(PUBLIC_DIR, 'index.html'))) throw new Error(`${PUBLIC_DIR} has no page: run npm run build first`);
    await mkdir(OUTPUT, { recursive: true });
    actions = await startActionsIssuer();
    [browser, server] = await Promise.all([
      launchBrowser(),
      startTestServer({ config: { oidc: { audience: 'repoadmin', tokenMinutes: 15, allowNetworks: ['127.0.0.0/8'] } } }),
    ]);
    const admin = await server.adminToken();
    const publisher = await server.request('POST', '/v1/trusted-publishers', {
      token: admin,
      body: { projectName: 'shop', provider: 'github', issuer: actions.issuer, claims: { repository: DEFAULT_JOB.repository }, branches: ['main'] },
    });
    expect(publisher.status).toBe(201);
    // The real exchange: the server verifies the stand-in's signature with its discovered keys.
    const exchanged = await server.request('POST', '/v1/authentication/oidc', { body: { token: await actions.sign('repoadmin') } });
    expect(exchanged.status).toBe(200);
    const artifact = (version: string) => ({ groupId: 'com.acme', artifactId: 'shop', version });
    const verified = await server.request('POST', '/v1/repositories', {
      token: exchanged.body.token,
      body: { projectName: 'shop', branch: 'main', artifact: artifact('2.0.0'), latestVersion: true, repositoryUrl: `https://github.com/${DEFAULT_JOB.repository}` },
    });
    expect(verified.status).toBe(201);
    verifiedUid = verified.body.uid;
    const plain = await server.request('POST', '/v1/repositories', {
      token: admin,
      body: { projectName: 'shop', branch: 'main', artifact: artifact('1.9.0'), repositoryUrl: `https://github.com/${DEFAULT_JOB.repository}` },
    });
    expect(plain.status).toBe(201);
    plainUid = plain.body.uid;
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await actions?.close();
  });

  afterEach(async () => {
    const pages = opened;
    opened = [];
    try {
      for (const watched of pages) {
        expect(watched.errors).toEqual([]);
        expect(watched.dialogs).toEqual([]);
      }
    } finally {
      await Promise.all(pages.map((watched) => watched.context.close()));
    }
  });

  async function visit(query: string): Promise<Page> {
    const watched = await openPage(browser);
    opened.push(watched);
    await watched.page.goto(`${server.url}/public/index.html${query}`);
    await watched.page.waitForSelector('#versions[aria-busy="false"]', { state: 'attached' });
    return watched.page;
  }

  it('marks the verified record with a link to its run, naming repository, ref and commit; the other record has no mark', async () => {
    const page = await visit('?groupId=com.acme&latestVersion=false');
    const mark = page.locator(`tr.record[data-uid="${verifiedUid}"] .badge.verified`);
    expect(await mark.count()).toBe(1);
    expect(await mark.innerText()).toMatch(/verified/i);
    expect(await mark.evaluate((element) => element.tagName)).toBe('A');
    expect(await mark.getAttribute('href')).toBe(RUN_URL);
    expect(await mark.getAttribute('rel')).toBe('noopener noreferrer');
    const title = (await mark.getAttribute('title'))!;
    expect(title).toContain(DEFAULT_JOB.repository);
    expect(title).toContain('refs/heads/main');
    expect(title).toContain(DEFAULT_JOB.sha.slice(0, 12));
    expect(await page.locator(`tr.record[data-uid="${plainUid}"] .badge.verified`).count()).toBe(0);

    // The detail says it in words, with the run as a link.
    await page.click(`tr.record[data-uid="${verifiedUid}"] .toggle`);
    const detail = page.locator(`#detail-${verifiedUid}`);
    await detail.waitFor();
    const builtBy = await detail.locator('dd.provenance').innerText();
    expect(builtBy).toContain(DEFAULT_JOB.repository);
    expect(builtBy).toContain('refs/heads/main');
    expect(builtBy).toContain(DEFAULT_JOB.sha.slice(0, 12));
    expect(await detail.locator('a.run').getAttribute('href')).toBe(RUN_URL);
    await page.screenshot({ path: path.join(OUTPUT, 'page-verified.png') });

    await page.click(`tr.record[data-uid="${plainUid}"] .toggle`);
    await page.locator(`#detail-${plainUid}`).waitFor();
    expect(await page.locator(`#detail-${plainUid} dd.provenance`).count()).toBe(0);
  });
});
