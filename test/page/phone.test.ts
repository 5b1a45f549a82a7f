// The package page as a newcomer meets it, in Chromium at phone width (390 px) and desktop width
// (1280 px): the filter card folded behind a button that shows the filters in use, long identifiers
// wrapped between their parts, an example that does not look like a value, and no broken image.
// Screenshots go to test-output/phone-*.png.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT, PUBLIC_DIR } from '../../server/paths.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { skipping } from '../helpers/skip.js';
import { type WatchedPage, afterSearch, browserAvailability, launchBrowser, openPage } from './browser.js';

const OUTPUT = path.join(PACKAGE_ROOT, 'test-output');
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 };
const DESKTOP = { viewport: { width: 1280, height: 800 } };

const browserState = browserAvailability();
const skip = skipping('the phone page tests', !browserState.available && !browserState.required ? browserState.reason : undefined);

const LONG = {
  projectName: 'payments-platform',
  branch: 'feature/PAY-1234-reconciliation-of-settlement-batches',
  groupId: 'com.example.payments.settlement.reconciliation.internal',
  artifactId: 'settlement-reconciliation-batch-worker-integration',
  version: '12.4.0-SNAPSHOT+build.20261123.1',
};
/** One part longer than a phone is wide: it must still stay inside, broken where it has to be. */
const UNBREAKABLE = 'x'.repeat(70);

describe.skipIf(skip)('the package page on a phone', () => {
  let browser: Browser;
  let server: TestServer;
  let opened: WatchedPage[] = [];
  let longUid: string;

  beforeAll(async () => {
    if (!browserState.available) throw new Error(browserState.reason);
    if (!existsSync(path.join(PUBLIC_DIR, 'index.html'))) throw new Error(`${PUBLIC_DIR} has no page: run npm run build first`);
    await mkdir(OUTPUT, { recursive: true });
    [browser, server] = await Promise.all([launchBrowser(), startTestServer()]);
    const token = await server.adminToken();
    const publish = async (body: Record<string, unknown>) => {
      const res = await server.request('POST', '/v1/repositories', { token, body });
      expect(res.status).toBe(201);
      return res.body.uid as string;
    };
    const { groupId, artifactId, version, ...rest } = LONG;
    longUid = await publish({
      ...rest,
      artifact: { groupId, artifactId, version },
      latestVersion: true,
      creationDate: '2026-11-20T10:00:00Z',
      repositoryUrl: 'https://git.example.com/payments/settlement-reconciliation-batch-worker-integration.git',
      description: [
        'Diagrams: ![settlement flow](missing-diagram.png) and <img src="x" alt="">.',
        '',
        'A present one stays an image: ![icon](favicon.svg)',
      ].join('\n'),
    });
    for (let i = 0; i < 6; i++) {
      await publish({
        projectName: 'delta',
        branch: 'main',
        artifact: { groupId: 'com.example.delta', artifactId: `service-${i}`, version: `1.${i}.0` },
        latestVersion: true,
        creationDate: `2026-11-1${i}T10:00:00Z`,
      });
    }
    await publish({
      projectName: 'delta',
      branch: 'main',
      artifact: { groupId: `com.example.${UNBREAKABLE}`, artifactId: 'wide', version: '1.0.0' },
      latestVersion: true,
      creationDate: '2026-11-01T10:00:00Z',
    });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  afterEach(async () => {
    const pages = opened;
    opened = [];
    try {
      for (const watched of pages) expect(watched.errors).toEqual([]);
    } finally {
      await Promise.all(pages.map((watched) => watched.context.close()));
    }
  });

  async function visit(options: typeof PHONE | typeof DESKTOP, query = ''): Promise<Page> {
    const watched = await openPage(browser, options);
    opened.push(watched);
    await watched.page.goto(`${server.url}/public/index.html${query}`);
    await watched.page.waitForSelector('#versions[aria-busy="false"]', { state: 'attached' });
    return watched.page;
  }

  const box = async (page: Page, selector: string) => (await page.locator(selector).first().boundingBox())!;

  it('folds the filter card behind a button that shows the filters in use, and puts records on the first screen', async () => {
    const page = await visit(PHONE);
    expect(await page.isVisible('#filters-toggle')).toBe(true);
    expect(await page.isVisible('#filters')).toBe(false);
    expect(await page.getAttribute('#filters-toggle', 'aria-expanded')).toBe('false');
    expect(await page.innerText('#filters-summary')).toBe('latest only');
    // Folded, the button is one line, and the first records start in the upper part of the screen.
    expect((await box(page, '#filters-toggle')).height).toBeLessThan(60);
    expect((await box(page, '#rows tr.record')).y).toBeLessThan(844 / 2);
    expect(await page.evaluate(() => window.__shifts)).toEqual([]);
    await page.screenshot({ path: path.join(OUTPUT, 'phone-folded.png') });

    await page.click('#filters-toggle');
    expect(await page.isVisible('#filters')).toBe(true);
    expect(await page.getAttribute('#filters-toggle', 'aria-expanded')).toBe('true');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('f-projectName');
    await page.fill('#f-projectName', 'delta');
    await page.fill('#f-type', 'LIBRARY');
    await page.screenshot({ path: path.join(OUTPUT, 'phone-unfolded.png') });
    await afterSearch(page, () => page.click('#filters button[type="submit"]'));

    // Searching folds the card again, with focus on its button, which now names the filters.
    expect(await page.isVisible('#filters')).toBe(false);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('filters-toggle');
    expect(await page.innerText('#filters-summary')).toBe('Project delta · Type LIBRARY · latest only');
    expect(await page.locator('#rows tr.record').count()).toBe(7);
    await page.screenshot({ path: path.join(OUTPUT, 'phone-filtered.png') });

    // The view is in the address: opened again, the folded card says what it holds.
    const again = await visit(PHONE, '?projectName=delta&latestVersion=false');
    expect(await again.innerText('#filters-summary')).toBe('Project delta · all versions');
  });

  it('shows the filter card itself, and no fold button, at desktop width', async () => {
    const page = await visit(DESKTOP);
    expect(await page.isVisible('#filters-toggle')).toBe(false);
    expect(await page.isVisible('#filters')).toBe(true);
    expect(await page.isVisible('#f-projectName')).toBe(true);
    await afterSearch(page, async () => {
      await page.fill('#f-projectName', 'delta');
      await page.press('#f-projectName', 'Enter');
    });
    // Searching leaves the card and the focus where they are.
    expect(await page.isVisible('#filters')).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('f-projectName');
    await page.screenshot({ path: path.join(OUTPUT, 'phone-desktop.png') });
  });

  it('shows the Type and Group examples as examples, not as values', async () => {
    for (const options of [PHONE, DESKTOP]) {
      const page = await visit(options);
      if (options === PHONE) await page.click('#filters-toggle');
      for (const [field, example] of [['type', 'e.g. LIBRARY'], ['groupId', 'e.g. com.acme.*']] as const) {
        expect(await page.getAttribute(`#f-${field}`, 'placeholder')).toBe(example);
        expect(await page.inputValue(`#f-${field}`)).toBe('');
        const style = await page.$eval(`#f-${field}`, (input) => {
          const placeholder = getComputedStyle(input, '::placeholder');
          return { fontStyle: placeholder.fontStyle, opacity: Number(placeholder.opacity) };
        });
        expect(style.fontStyle).toBe('italic');
        expect(style.opacity).toBeLessThan(0.7);
      }
    }
  });

  /** How a cell's text is laid out: the text of each line, read from the characters' positions. */
  function lines(page: Page, selector: string): Promise<string[]> {
    return page.$eval(selector, (element) => {
      const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
      const result: { top: number; text: string }[] = [];
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent ?? '';
        for (let i = 0; i < text.length; i++) {
          const range = document.createRange();
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          const rect = range.getClientRects()[0];
          if (!rect) continue;
          const last = result[result.length - 1];
          if (last && Math.abs(last.top - rect.top) < rect.height / 2) last.text += text[i];
          else result.push({ top: rect.top, text: text[i]! });
        }
      }
      return result.map((line) => line.text);
    });
  }

  it.each([
    ['phone', PHONE],
    ['desktop', DESKTOP],
  ] as const)('wraps long identifiers between their parts, never inside one, at %s width', async (name, options) => {
    const page = await visit(options, '?projectName=payments-platform');
    const row = `tr.record[data-uid="${longUid}"]`;
    for (const [cell, value] of [['group', LONG.groupId], ['artifact', LONG.artifactId], ['branch', LONG.branch], ['version .version', LONG.version]] as const) {
      const shown = await lines(page, `${row} td.c-${cell}`);
      expect(shown.join(''), cell).toContain(value);
      // Every line but the last ends at a separator: the break falls between two parts.
      for (const line of shown.slice(0, -1)) expect(line, `${cell} at ${name}: ${JSON.stringify(shown)}`).toMatch(/[._\-/:@+ ]$/);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(options.viewport.width);
    await page.click(`${row} .toggle`);
    await page.locator(`#detail-${longUid} .coordinates code`).waitFor();
    const coordinates = await lines(page, `#detail-${longUid} .coordinates code`);
    for (const line of coordinates.slice(0, -1)) expect(line, JSON.stringify(coordinates)).toMatch(/[._\-/:@+]$/);
    // Copying the coordinates gives them back whole: the break chances are not characters.
    expect(coordinates.join('')).toBe(`${LONG.groupId}:${LONG.artifactId}:${LONG.version}`);
    await page.screenshot({ path: path.join(OUTPUT, `phone-long-${name}.png`), fullPage: true });
  });

  it('keeps a part too long for the width inside the card, broken where it must be', async () => {
    const page = await visit(PHONE, '?artifactId=wide');
    const shown = await lines(page, 'tr.record td.c-group');
    expect(shown.join('')).toBe(`com.example.${UNBREAKABLE}`);
    expect(shown.length).toBeGreaterThan(1);
    const inside = await page.$eval('tr.record td.c-group', (cell) => {
      const card = cell.closest('tr')!.getBoundingClientRect();
      const own = cell.getBoundingClientRect();
      return own.right <= card.right + 0.5 && cell.scrollWidth <= cell.clientWidth;
    });
    expect(inside).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  });

  it.each([
    ['phone', PHONE],
    ['desktop', DESKTOP],
  ] as const)('shows a same-origin image that fails as a link with its alt text, never a broken image, at %s width', async (name, options) => {
    const page = await visit(options, `?uid=${longUid}`);
    await page.click(`tr.record[data-uid="${longUid}"] .toggle`);
    const markdown = page.locator(`#detail-${longUid} .markdown`);
    await markdown.getByText('image: settlement flow').waitFor();
    await markdown.getByText('image: x').waitFor();
    expect(await markdown.getByText('image: settlement flow').getAttribute('href')).toBe('missing-diagram.png');
    // The image that loads stays an image, and nothing is left broken.
    await page.waitForFunction((uid) => {
      const images = [...document.querySelectorAll(`#detail-${uid} .markdown img`)] as HTMLImageElement[];
      return images.length === 1 && images[0]!.complete;
    }, longUid);
    const images = await markdown.locator('img').evaluateAll((found) => (found as HTMLImageElement[]).map((img) => ({ src: img.getAttribute('src'), width: img.naturalWidth })));
    expect(images).toEqual([{ src: 'favicon.svg', width: expect.any(Number) }]);
    expect(images[0]!.width).toBeGreaterThan(0);
    await markdown.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(OUTPUT, `phone-images-${name}.png`) });
  });
});
