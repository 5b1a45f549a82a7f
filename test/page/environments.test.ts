// The package page's environments in Chromium against the real server: a column per environment
// with each artifact's current version, vetoed versions struck through with their reason, the
// promotion history in a record's detail; no layout shift on load, at desktop and phone width.
// Screenshots go to test-output/environments-*.png.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT, PUBLIC_DIR } from '../../server/paths.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { skipping } from '../helpers/skip.js';
import { type PageOptions, type WatchedPage, browserAvailability, launchBrowser, openPage } from './browser.js';

const OUTPUT = path.join(PACKAGE_ROOT, 'test-output');
const DESKTOP = { viewport: { width: 1366, height: 900 } };
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 };
const REASON = 'corrupts the session cache (INC-42)';

const browserState = browserAvailability();
const skip = skipping('the environment page tests', !browserState.available && !browserState.required ? browserState.reason : undefined);

describe.skipIf(skip)('the package page: environments, vetoes and promotions', () => {
  let browser: Browser;
  let server: TestServer;
  let opened: WatchedPage[] = [];
  const uids: Record<string, string> = {};

  beforeAll(async () => {
    if (!browserState.available) throw new Error(browserState.reason);
    if (!existsSync(path.join(PUBLIC_DIR, 'index.html'))) throw new Error(`${PUBLIC_DIR} has no page: run npm run build first`);
    await mkdir(OUTPUT, { recursive: true });
    [browser, server] = await Promise.all([launchBrowser(), startTestServer()]);
    const token = await server.adminToken();
    const call = async (method: string, url: string, body: unknown, status: number) => {
      const res = await server.request(method, url, { token, body });
      expect(res.status, `${method} ${url}: ${res.text}`).toBe(status);
      return res.body;
    };
    await call('PUT', '/v1/projects/shop/environments', { environments: [{ name: 'dev' }, { name: 'staging', requires: 'dev' }, { name: 'prod', requires: 'staging', protected: true }] }, 200);
    for (const [artifactId, version] of [['app', '1.0.0'], ['app', '1.1.0'], ['app', '1.2.0'], ['worker', '3.0.0']] as const) {
      const published = await call('POST', '/v1/repositories', { projectName: 'shop', branch: 'main', latestVersion: true, artifact: { groupId: 'com.acme', artifactId, version } }, 201);
      uids[`${artifactId}:${version}`] = published.uid as string;
    }
    const promote = (key: string, environment: string, comment?: string) => call('POST', '/v1/promotions', { uid: uids[key], environment, comment }, 201);
    await promote('app:1.0.0', 'dev');
    await promote('app:1.0.0', 'staging');
    await promote('app:1.0.0', 'prod', 'CHG-1');
    await promote('app:1.1.0', 'dev', 'next');
    await promote('worker:3.0.0', 'dev');
    // Current in dev, then vetoed: the environments show it struck through.
    await call('PUT', `/v1/repositories/${uids['app:1.1.0']}/veto`, { reason: REASON }, 200);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  afterEach(async () => {
    const pages = opened;
    opened = [];
    try {
      for (const watched of pages) {
        for (const request of watched.requests) expect(request.url().startsWith(`${server.url}/`), request.url()).toBe(true);
        expect(watched.dialogs).toEqual([]);
        expect(watched.errors).toEqual([]);
      }
    } finally {
      await Promise.all(pages.map((watched) => watched.context.close()));
    }
  });

  async function visit(query: string, options: PageOptions): Promise<WatchedPage> {
    const watched = await openPage(browser, options);
    opened.push(watched);
    await watched.page.goto(`${server.url}/public/index.html${query}`);
    await watched.page.waitForSelector('#versions[aria-busy="false"]', { state: 'attached' });
    return watched;
  }

  /** The environments table of a project: its header and, per artifact, the text of each cell. */
  async function environmentsShown(watched: WatchedPage, project: string) {
    const card = watched.page.locator(`.environments-card[data-project="${project}"]`);
    await card.waitFor();
    return card.evaluate((element) => ({
      head: [...element.querySelectorAll('thead th')].map((th) => th.textContent),
      rows: Object.fromEntries(
        [...element.querySelectorAll('tbody tr')].map((tr) => [
          tr.getAttribute('data-artifact'),
          Object.fromEntries([...tr.querySelectorAll('td')].map((td) => [td.getAttribute('data-env'), td.textContent])),
        ]),
      ),
      struck: [...element.querySelectorAll('del.vetoed')].map((del) => ({ text: del.textContent, title: del.getAttribute('title'), env: del.closest('td')?.getAttribute('data-env') })),
    }));
  }

  it('shows a column per environment with the current version of each artifact, a vetoed one struck through with its reason', async () => {
    const watched = await visit('?projectName=shop&latestVersion=false', DESKTOP);
    const shown = await environmentsShown(watched, 'shop');
    expect(shown.head).toEqual(['Artifact', 'dev', 'staging', 'prod']);
    expect(shown.rows).toEqual({
      'com.acme:app': { dev: `1.1.0 vetoed: ${REASON}`, staging: '1.0.0', prod: '1.0.0' },
      'com.acme:worker': { dev: '3.0.0', staging: '–', prod: '–' },
    });
    expect(shown.struck).toEqual([{ text: '1.1.0', title: `Vetoed: ${REASON}`, env: 'dev' }]);
    // In the list too: the vetoed record's version is struck through, with a badge that says why.
    const row = watched.page.locator(`tr.record[data-uid="${uids['app:1.1.0']}"]`);
    await expect(row.locator('del.vetoed').innerText()).resolves.toBe('1.1.0');
    await expect(row.locator('.badge.veto').getAttribute('title')).resolves.toBe(`Vetoed by admin: ${REASON}`);
    expect(await watched.page.locator('#rows del.vetoed').count()).toBe(1);
  }, 120_000);

  it("shows the artifact's promotion history, newest first, in a record's detail, and the veto among its facts", async () => {
    const watched = await visit('?projectName=shop&latestVersion=false', DESKTOP);
    const { page } = watched;
    await page.click(`tr.record[data-uid="${uids['app:1.1.0']}"] .toggle`);
    const detail = page.locator(`#detail-${uids['app:1.1.0']}`);
    await detail.locator('.history li').first().waitFor();
    const items = await detail.locator('.history li').allInnerTexts();
    expect(items).toHaveLength(4);
    expect(items[0]).toMatch(/dev 1\.1\.0 replacing 1\.0\.0 · admin · next$/);
    expect(items[1]).toMatch(/prod 1\.0\.0 · admin · CHG-1$/);
    expect(items[3]).toMatch(/dev 1\.0\.0 · admin$/);
    await expect(detail.locator('dd.veto').innerText()).resolves.toContain(REASON);
    // The history is the artifact's, shown in each of its records; only the vetoed one shows a veto.
    await page.click(`tr.record[data-uid="${uids['app:1.2.0']}"] .toggle`);
    const other = page.locator(`#detail-${uids['app:1.2.0']}`);
    await other.locator('.history li').first().waitFor();
    expect(await other.locator('dd.veto').count()).toBe(0);
  }, 120_000);

  it('does not shift the layout on load, at desktop and phone width', async () => {
    for (const [name, options] of [
      ['desktop', DESKTOP],
      ['phone', PHONE],
    ] as const) {
      const watched = await visit('?projectName=shop&latestVersion=false', options);
      const { page } = watched;
      await environmentsShown(watched, 'shop');
      // Layout shifts are reported after the frame they happen in: wait for two frames to pass.
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      expect(await page.evaluate(() => window.__shifts), name).toEqual([]);
      // The environments stay inside the page's width (a wide table scrolls within its card).
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, name).toBeLessThanOrEqual(0);
      await page.locator('#environments').scrollIntoViewIfNeeded();
      await page.screenshot({ path: path.join(OUTPUT, `environments-${name}.png`), fullPage: true });
      await page.click(`tr.record[data-uid="${uids['app:1.1.0']}"] .toggle`);
      await page.locator(`#detail-${uids['app:1.1.0']} .history li`).first().waitFor();
      await page.locator(`#detail-${uids['app:1.1.0']}`).scrollIntoViewIfNeeded();
      await page.screenshot({ path: path.join(OUTPUT, `environments-${name}-detail.png`) });
    }
  }, 180_000);
});
