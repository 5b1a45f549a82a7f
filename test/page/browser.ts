// Chromium for the page test: the Debian browser driven by playwright-core (never a downloaded
// one), and a page that records every request, dialog, error and layout shift.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page, type Request } from 'playwright-core';
import type { Seed } from './seed.js';

export const CHROMIUM = '/usr/bin/chromium';

/** Whether the test can run; under REPOADMIN_REQUIRE_BROWSER=1 a missing browser is a failure. */
export function browserAvailability(): { available: boolean; required: boolean; reason: string } {
  const available = existsSync(CHROMIUM);
  const required = process.env.REPOADMIN_REQUIRE_BROWSER === '1';
  const reason = available
    ? ''
    : `no Chromium at ${CHROMIUM} (apt-get install chromium); the page test is skipped unless REPOADMIN_REQUIRE_BROWSER=1 makes it fail`;
  return { available, required, reason };
}

export function launchBrowser(): Promise<Browser> {
  // launch() gives each browser a fresh temporary profile (its own --user-data-dir).
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
}

declare global {
  interface Window {
    /** The layout shifts not caused by input (PerformanceObserver `layout-shift`): each one's value and what moved, from where to where. */
    __shifts: string[];
    __xss?: unknown;
  }
}

export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  requests: Request[];
  dialogs: string[];
  errors: string[];
}

export interface PageOptions {
  viewport?: { width: number; height: number };
  deviceScaleFactor?: number;
}

/** A new context (own storage) and page in the reader's zone and language of this test. */
export async function openPage(browser: Browser, options: PageOptions = {}): Promise<WatchedPage> {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1366, height: 900 },
    deviceScaleFactor: options.deviceScaleFactor ?? 1,
    locale: 'en-GB',
    timezoneId: 'Europe/Berlin',
  });
  const page = await context.newPage();
  const watched: WatchedPage = { page, context, requests: [], dialogs: [], errors: [] };
  await watchPage(watched, page);
  return watched;
}

/** Records what a page of the context does (also for further tabs of it). */
export async function watchPage(watched: WatchedPage, page: Page): Promise<void> {
  page.on('request', (request) => watched.requests.push(request));
  page.on('dialog', (dialog) => {
    watched.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss().catch(() => undefined);
  });
  page.on('pageerror', (error) => watched.errors.push(error.message));
  await page.addInitScript(() => {
    window.__shifts = [];
    type Source = { node?: Node | null; previousRect: DOMRectReadOnly; currentRect: DOMRectReadOnly };
    const rect = (r: DOMRectReadOnly) => `${r.x},${r.y} ${r.width}x${r.height}`;
    const name = (node?: Node | null) => {
      if (!(node instanceof Element)) return node?.nodeName ?? '(gone)';
      return `${node.tagName.toLowerCase()}${node.id ? `#${node.id}` : ''}${[...node.classList].map((c) => `.${c}`).join('')}`;
    };
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as (PerformanceEntry & { value: number; hadRecentInput: boolean; sources?: Source[] })[]) {
        if (entry.hadRecentInput) continue;
        const moved = (entry.sources ?? []).map((s) => `${name(s.node)} ${rect(s.previousRect)} -> ${rect(s.currentRect)}`);
        window.__shifts.push(`${entry.value.toFixed(5)} at ${Math.round(entry.startTime)} ms: ${moved.join('; ')}`);
      }
    }).observe({ type: 'layout-shift', buffered: true });
  });
}

/** Runs an action that makes the page search, and waits until the answer is on the page. */
export async function afterSearch(page: Page, action: () => Promise<unknown>): Promise<void> {
  const answered = page.waitForResponse((response) => response.url().includes('/v1/repositories/search'));
  // Should the action fail (or the test end first), the wait is not left as an unhandled rejection.
  answered.catch(() => undefined);
  await action();
  await answered;
  await page.waitForSelector('#versions[aria-busy="false"]', { state: 'attached' });
}

/** A row as shown: the record's fields plus how the date and the latest flag appear. */
export type ShownRow = Pick<Seed, 'uid' | 'projectName' | 'branch' | 'groupId' | 'artifactId' | 'version' | 'type'> & {
  date: string;
  datetime: string;
  dateTitle: string;
  latest: boolean;
};

/** The record rows as the page shows them. */
export function shownRows(page: Page): Promise<ShownRow[]> {
  return page.$$eval('#rows tr.record', (rows) =>
    rows.map((row) => {
      const cell = (name: string) => row.querySelector(`td.c-${name}`)?.textContent?.trim() ?? '';
      const time = row.querySelector('td.c-date time');
      return {
        uid: row.getAttribute('data-uid') ?? '',
        projectName: cell('project'),
        branch: cell('branch'),
        groupId: cell('group'),
        artifactId: cell('artifact'),
        version: row.querySelector('td.c-version .version')?.textContent ?? '',
        type: cell('type'),
        date: cell('date'),
        datetime: time?.getAttribute('datetime') ?? '',
        dateTitle: time?.getAttribute('title') ?? '',
        latest: row.querySelector('td.c-version .badge') !== null,
      };
    }),
  );
}

export function statusText(page: Page): Promise<string> {
  return page.locator('#status').innerText();
}
