// The package page in Chromium against the real server with published records (issue 5).
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { toRow } from '../../server/db/versions.js';
import { PACKAGE_ROOT, PUBLIC_DIR } from '../../server/paths.js';
import { ADMIN_PASSWORD, type TestServer, startTestServer } from '../helpers/server.js';
import { skipping } from '../helpers/skip.js';
import {
  type PageOptions,
  type WatchedPage,
  afterSearch,
  browserAvailability,
  launchBrowser,
  openPage,
  shownRows,
  statusText,
  watchPage,
} from './browser.js';
import { HOSTILE_DESCRIPTION, SEEDS, type Seed, VERSION_ORDER, coordinates, latestKey, latestSeeds, publish } from './seed.js';

const OUTPUT = path.join(PACKAGE_ROOT, 'test-output');
const DESKTOP = { viewport: { width: 1366, height: 900 } };
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 };
const FILTER_INPUTS = ['projectName', 'branch', 'groupId', 'artifactId', 'version', 'type', 'uid'] as const;

const browserState = browserAvailability();
const skip = skipping('the package page tests', !browserState.available && !browserState.required ? browserState.reason : undefined);

/** The filter semantics of docs/api.md, "Filters": exact, `*` as a wildcard. */
function matches(value: string, filter: string): boolean {
  const pattern = filter.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${pattern}$`).test(value);
}

function berlinTime(iso: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(iso));
}

describe.skipIf(skip)(skip ? `package page (skipped: ${browserState.reason})` : 'package page', () => {
  let browser: Browser;
  let server: TestServer;
  /** Pages opened by the current test, with the origin everything they load must come from. */
  let opened: { watched: WatchedPage; origin: string }[] = [];

  beforeAll(async () => {
    if (!browserState.available) throw new Error(browserState.reason);
    if (!existsSync(path.join(PUBLIC_DIR, 'index.html'))) throw new Error(`${PUBLIC_DIR} has no page: run npm run build first`);
    await mkdir(OUTPUT, { recursive: true });
    [browser, server] = await Promise.all([launchBrowser(), startTestServer()]);
    await publish(server);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  afterEach(async () => {
    const pages = opened;
    opened = [];
    try {
      for (const { watched, origin } of pages) {
        // Nothing leaves the server's origin: no CDN, no font service, no remote image.
        for (const request of watched.requests) expect(request.url().startsWith(`${origin}/`), request.url()).toBe(true);
        // Every search asks for a page of at most 100 records.
        const searches = watched.requests.filter((request) => request.url().includes('/v1/repositories/search'));
        for (const request of searches) {
          const size = Number(new URL(request.url()).searchParams.get('size'));
          expect(size, request.url()).toBeGreaterThanOrEqual(1);
          expect(size, request.url()).toBeLessThanOrEqual(100);
        }
        expect(watched.dialogs).toEqual([]);
        expect(watched.errors).toEqual([]);
      }
    } finally {
      await Promise.all(pages.map(({ watched }) => watched.context.close()));
    }
  });

  /** Opens the page with a query and waits for its first answer. */
  async function visit(query = '', options: PageOptions = DESKTOP, target: TestServer = server): Promise<WatchedPage> {
    const watched = await openPage(browser, options);
    opened.push({ watched, origin: target.url });
    await watched.page.goto(`${target.url}/public/index.html${query}`);
    await watched.page.waitForSelector('#versions[aria-busy="false"]', { state: 'attached' });
    return watched;
  }

  async function search(page: Page, filters: Partial<Record<(typeof FILTER_INPUTS)[number], string>>, latestOnly: boolean): Promise<void> {
    for (const field of FILTER_INPUTS) await page.fill(`#f-${field}`, filters[field] ?? '');
    await page.setChecked('#f-latest', latestOnly);
    await afterSearch(page, () => page.click('#filters button[type="submit"]'));
  }

  const seed = (artifactId: string, version: string): Seed => {
    const found = SEEDS.find((s) => s.artifactId === artifactId && s.version === version);
    if (!found) throw new Error(`no seed ${artifactId} ${version}`);
    return found;
  };

  it('lists the latest version of each project, artifact and branch by default, with the right values', async () => {
    const { page } = await visit();
    expect(await page.isChecked('#f-latest')).toBe(true);
    const rows = await shownRows(page);
    const expected = latestSeeds();
    expect(rows.map((row) => row.uid).sort()).toEqual(expected.map((s) => s.uid).sort());
    expect(new Set(rows.map(latestKey)).size).toBe(rows.length);
    for (const row of rows) {
      const record = expected.find((s) => s.uid === row.uid)!;
      expect(row).toMatchObject({
        projectName: record.projectName,
        branch: record.branch,
        groupId: record.groupId,
        artifactId: record.artifactId,
        version: record.version,
        type: record.type,
        latest: true,
      });
      // The date in the reader's zone (Berlin, UTC+1 in March), the exact time on hover.
      expect(row.datetime).toBe(record.creationDate);
      expect(row.date).toContain(berlinTime(record.creationDate));
      expect(row.dateTitle).toContain(`${berlinTime(record.creationDate)}:00`);
      expect(row.dateTitle).toContain(record.creationDate);
    }
    // The server's default order: newest first.
    expect(rows.map((row) => row.datetime)).toEqual(rows.map((row) => row.datetime).sort().reverse());
    expect(await statusText(page)).toBe(`1–${expected.length} of ${expected.length} latest versions`);
    // borealis release/1.x has no latest record, so it is only listed with "latest only" off.
    expect(rows.some((row) => row.branch === 'release/1.x')).toBe(false);

    await afterSearch(page, () => page.uncheck('#f-latest').then(() => page.click('#filters button[type="submit"]')));
    expect(await statusText(page)).toBe(`1–25 of ${SEEDS.length} versions`);
    const all = await shownRows(page);
    expect(all).toHaveLength(25);
    expect(all.some((row) => !row.latest)).toBe(true);
    expect(page.url()).toContain('latestVersion=false');
  });

  // Twelve searches of about a hundred browser round trips each: minutes on busy cores, not a measure of speed.
  it('narrows the rows with each filter, and says when nothing matches', async () => {
    const { page } = await visit('?latestVersion=false&size=100');
    const cases: { filters: Partial<Record<(typeof FILTER_INPUTS)[number], string>>; latestOnly: boolean }[] = [
      { filters: { projectName: 'borealis' }, latestOnly: false },
      { filters: { branch: 'release/1.x' }, latestOnly: false },
      { filters: { groupId: 'io.delta.data' }, latestOnly: false },
      { filters: { groupId: 'com.acme.*' }, latestOnly: false },
      { filters: { artifactId: 'web-ui' }, latestOnly: false },
      { filters: { version: '3.4.1' }, latestOnly: false },
      { filters: { version: '1.0.0-*' }, latestOnly: false },
      { filters: { type: 'APPLICATION' }, latestOnly: false },
      { filters: { type: 'SERVICE' }, latestOnly: false },
      { filters: { uid: seed('core', '1.9.0').uid }, latestOnly: false },
      { filters: { projectName: 'atlas' }, latestOnly: true },
      { filters: { projectName: 'delta', artifactId: 'ingest' }, latestOnly: false },
    ];
    for (const { filters, latestOnly } of cases) {
      await search(page, filters, latestOnly);
      const expected = SEEDS.filter(
        (s) =>
          (!latestOnly || latestSeeds().includes(s)) &&
          Object.entries(filters).every(([field, value]) => matches(s[field as keyof Seed] as string, value)),
      );
      const label = JSON.stringify({ filters, latestOnly });
      expect(expected.length, label).toBeGreaterThan(0);
      expect(expected.length, label).toBeLessThan(SEEDS.length);
      const rows = await shownRows(page);
      const scope = latestOnly ? 'latest versions' : 'versions';
      expect(await statusText(page), label).toBe(`1–${Math.min(100, expected.length)} of ${expected.length} ${scope}`);
      if (expected.length <= 100) expect(rows.map((row) => row.uid).sort(), label).toEqual(expected.map((s) => s.uid).sort());
      else expect(rows.every((row) => expected.some((s) => s.uid === row.uid)), label).toBe(true);
      for (const [field, value] of Object.entries(filters)) expect(new URL(page.url()).searchParams.get(field)).toBe(value);
    }

    // Loading, then empty: the page says what is happening.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/v1/repositories/search**', async (route) => {
      await held;
      await route.continue();
    });
    await page.fill('#f-projectName', 'no-such-project');
    const answered = page.waitForResponse((response) => response.url().includes('/v1/repositories/search'));
    await page.click('#filters button[type="submit"]');
    await page.waitForSelector('#versions[aria-busy="true"]', { state: 'attached' });
    expect(await statusText(page)).toBe('Loading versions…');
    release();
    await answered;
    await page.unroute('**/v1/repositories/search**');
    await page.waitForSelector('#rows tr.message.empty');
    expect(await page.locator('#rows tr.message').innerText()).toContain('No versions found');
    await afterSearch(page, () => page.getByRole('button', { name: 'Clear the filters' }).click());
    expect(await page.inputValue('#f-projectName')).toBe('');
    expect((await shownRows(page)).length).toBeGreaterThan(0);
  });

  it('sorts by version in version order, done by the server', async () => {
    const { page, requests } = await visit('?projectName=atlas&branch=main&artifactId=core&latestVersion=false');
    expect(await page.getAttribute('th[data-sort="creationDate"]', 'aria-sort')).toBe('descending');
    await afterSearch(page, () => page.click('th[data-sort="version"] button'));
    expect((await shownRows(page)).map((row) => row.version)).toEqual(VERSION_ORDER);
    expect(await page.getAttribute('th[data-sort="version"]', 'aria-sort')).toBe('ascending');
    expect(await page.locator('th[aria-sort]').count()).toBe(1);
    const sortedRequest = new URL(requests.filter((r) => r.url().includes('/v1/repositories/search')).at(-1)!.url());
    expect(sortedRequest.searchParams.get('sortField')).toBe('version');
    expect(sortedRequest.searchParams.get('sortDirection')).toBe('ASC');

    await afterSearch(page, () => page.click('th[data-sort="version"] button'));
    expect((await shownRows(page)).map((row) => row.version)).toEqual([...VERSION_ORDER].reverse());
    expect(await page.getAttribute('th[data-sort="version"]', 'aria-sort')).toBe('descending');
    expect(new URL(page.url()).searchParams.get('sortDirection')).toBe('DESC');

    await afterSearch(page, () => page.click('th[data-sort="projectName"] button'));
    expect(await page.getAttribute('th[data-sort="projectName"]', 'aria-sort')).toBe('ascending');
    expect(await page.getAttribute('th[data-sort="version"]', 'aria-sort')).toBeNull();
  });

  it('pages through the records and shows the right total', async () => {
    const payments = SEEDS.filter((s) => s.artifactId === 'payments');
    const { page } = await visit('?artifactId=payments&latestVersion=false');
    expect(await statusText(page)).toBe('1–25 of 120 versions');
    await afterSearch(page, () => page.selectOption('#size', '50'));
    expect(await statusText(page)).toBe('1–50 of 120 versions');
    expect(await page.locator('.pager').first().locator('[data-page-label]').innerText()).toBe('Page 1 of 3');
    const first = await shownRows(page);
    expect(first.map((row) => row.version).slice(0, 2)).toEqual(['3.0.119', '3.0.118']);

    await afterSearch(page, () => page.locator('.pager').first().getByRole('button', { name: 'Next page' }).click());
    expect(await statusText(page)).toBe('51–100 of 120 versions');
    const second = await shownRows(page);
    expect(new URL(page.url()).searchParams.get('page')).toBe('2');

    await afterSearch(page, () => page.locator('.pager.bottom').getByRole('button', { name: 'Last page' }).click());
    expect(await statusText(page)).toBe('101–120 of 120 versions');
    expect(await page.locator('.pager').first().locator('[data-page-label]').innerText()).toBe('Page 3 of 3');
    expect(await page.locator('.pager').first().getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    const third = await shownRows(page);
    expect([first.length, second.length, third.length]).toEqual([50, 50, 20]);
    const seen = [...first, ...second, ...third].map((row) => row.uid);
    expect(new Set(seen).size).toBe(120);
    expect(seen.sort()).toEqual(payments.map((s) => s.uid).sort());

    // Back in history is the page before.
    await afterSearch(page, () => page.goBack());
    expect(await statusText(page)).toBe('51–100 of 120 versions');
    expect((await shownRows(page)).map((row) => row.uid)).toEqual(second.map((row) => row.uid));
  });

  it('restores a filtered, sorted and paged view from the URL', async () => {
    const query = '?projectName=atlas&branch=main&artifactId=core&latestVersion=false&sortField=version&sortDirection=DESC&size=10&page=2';
    const { page } = await visit(query);
    expect(await page.inputValue('#f-projectName')).toBe('atlas');
    expect(await page.inputValue('#f-branch')).toBe('main');
    expect(await page.inputValue('#f-artifactId')).toBe('core');
    expect(await page.isChecked('#f-latest')).toBe(false);
    expect(await page.inputValue('#size')).toBe('10');
    expect(await page.getAttribute('th[data-sort="version"]', 'aria-sort')).toBe('descending');
    const descending = [...VERSION_ORDER].reverse();
    expect((await shownRows(page)).map((row) => row.version)).toEqual(descending.slice(10, 20));
    expect(await statusText(page)).toBe(`11–${VERSION_ORDER.length} of ${VERSION_ORDER.length} versions`);
    expect(new URL(page.url()).search).toBe(new URL(`http://x/${query}`).search);

    await afterSearch(page, () => page.reload());
    expect((await shownRows(page)).map((row) => row.version)).toEqual(descending.slice(10, 20));
  });

  it('asks for at most 100 records, whatever the URL says', async () => {
    const { page, requests } = await visit('?size=1000&latestVersion=false');
    const asked = requests.filter((request) => request.url().includes('/v1/repositories/search'));
    expect(asked).toHaveLength(1);
    expect(new URL(asked[0]!.url()).searchParams.get('size')).toBe('100');
    expect(await page.inputValue('#size')).toBe('100');
    expect(new URL(page.url()).searchParams.get('size')).toBe('100');
    expect(await shownRows(page)).toHaveLength(100);
  });

  it('renders a description as Markdown and keeps scripts, handlers and javascript: links inert', async () => {
    const hostile = seed('cli', '3.4.1');
    expect(hostile.description).toBe(HOSTILE_DESCRIPTION);
    const { page } = await visit(`?uid=${hostile.uid}`);
    await page.click(`tr.record[data-uid="${hostile.uid}"] .toggle`);
    const markdown = page.locator(`#detail-${hostile.uid} .markdown`);
    await markdown.locator('strong').waitFor();
    expect(await markdown.locator('h1').innerText()).toBe('Release notes');
    expect(await markdown.locator('strong').innerText()).toBe('bold words');
    expect(await markdown.locator('code').innerText()).toBe('code <script>alert(1)</script>');
    expect(await markdown.getByText('image: tracking pixel').count()).toBe(1);
    // The wide table scrolls inside the description: the page does not scroll sideways.
    expect(await markdown.locator('table td').count()).toBe(2);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(page.viewportSize()!.width);
    // Clicking the defused links does nothing either.
    await markdown.getByText('click me').click();
    await markdown.getByText('raw link').click();
    // Whatever the clicks or the images could run has had its turn: every image of the description
    // has loaded or failed (an onerror would run then), and a task queued after the clicks has run.
    await page.evaluate(async () => {
      const images = [...document.querySelectorAll<HTMLImageElement>('.detail .markdown img')];
      await Promise.all(images.map((image) => (image.complete ? undefined : new Promise((done) => ['load', 'error'].forEach((e) => image.addEventListener(e, done, { once: true }))))));
      await new Promise((done) => setTimeout(done, 0));
    });

    const found = await page.evaluate(() => {
      const handlers: string[] = [];
      const javascriptUrls: string[] = [];
      for (const element of document.querySelectorAll('*')) {
        for (const attribute of element.attributes) {
          if (attribute.name.toLowerCase().startsWith('on')) handlers.push(`${element.tagName} ${attribute.name}`);
          if (/javascript:/i.test(attribute.value)) javascriptUrls.push(`${element.tagName} ${attribute.name}=${attribute.value}`);
        }
      }
      const description = document.querySelector('.detail .markdown')!;
      return {
        handlers,
        javascriptUrls,
        scripts: [...document.scripts].map((script) => script.getAttribute('src')),
        embedded: [...description.querySelectorAll('script, iframe, svg, object, embed, style, [style]')].map((e) => e.outerHTML),
        // A same-origin image may stay (here `x`, a 404); nothing is loaded from elsewhere.
        images: [...description.querySelectorAll('img')].map((image) => new URL(image.getAttribute('src') ?? '', document.baseURI).origin),
        xss: window.__xss,
      };
    });
    expect(found.handlers).toEqual([]);
    expect(found.javascriptUrls).toEqual([]);
    expect(found.scripts).toEqual([expect.stringMatching(/^assets\/main-[A-Z0-9]+\.js$/)]);
    expect(found.embedded).toEqual([]);
    expect(found.images.every((origin) => origin === server.url)).toBe(true);
    expect(found.xss).toBeUndefined();
    // afterEach: no dialog opened and no request to tracker.example.
  });

  it('shows the repository as a link only for web addresses and copies the coordinates', async () => {
    const web = seed('web-ui', '4.2.0');
    const ssh = seed('core', '2.1.0-rc.1');
    const { page, context } = await visit('?latestVersion=false&projectName=atlas');
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await page.click(`tr.record[data-uid="${web.uid}"] .toggle`);
    const webDetail = page.locator(`#detail-${web.uid}`);
    expect(await webDetail.locator('a.repository').getAttribute('href')).toBe(web.repositoryUrl);
    await webDetail.locator('.markdown h2').waitFor();
    expect(await webDetail.locator('.markdown li').count()).toBe(3);
    await webDetail.getByRole('button', { name: 'Copy' }).click();
    await webDetail.getByText('Copied').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(coordinates(web));

    await page.click(`tr.record[data-uid="${ssh.uid}"] .toggle`);
    const sshDetail = page.locator(`#detail-${ssh.uid}`);
    expect(await sshDetail.locator('a.repository').count()).toBe(0);
    expect(await sshDetail.locator('code.repository').innerText()).toBe(ssh.repositoryUrl);
    expect(await sshDetail.locator('.markdown').innerText()).toBe('No description.');
  });

  it('does not shift the layout on load, and looks right at desktop and phone width', async () => {
    for (const [name, options] of [
      ['desktop', DESKTOP],
      ['phone', PHONE],
    ] as const) {
      const { page } = await visit('', options);
      // The records are shown (visit waits for that) and the fonts are in; layout shifts are
      // reported after the frame they happen in: wait for two frames to pass.
      await page.evaluate(async () => {
        await document.fonts.ready;
        await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
      });
      expect(await page.evaluate(() => window.__shifts), name).toEqual([]);
      await page.screenshot({ path: path.join(OUTPUT, `page-${name}.png`) });
      const web = seed('web-ui', '4.2.0');
      await page.click(`tr.record[data-uid="${web.uid}"] .toggle`);
      await page.locator(`#detail-${web.uid} .markdown h2`).waitFor();
      await page.locator(`tr.record[data-uid="${web.uid}"]`).scrollIntoViewIfNeeded();
      await page.screenshot({ path: path.join(OUTPUT, `page-${name}-detail.png`), fullPage: name === 'desktop' });
    }
  });

  describe('paints nothing before the table is read, so the rest of the document moves nothing', () => {
    // A browser may paint while the document is still being read (its parser yields after any tag
    // once the stylesheet is in), and again with the rest: the right-hand parts of the header and
    // of the toolbar would then move when the parts after them arrive. The document is served up to
    // a tag, held until the browser has painted (or 2 s have passed), then the rest. Each cut at
    // each width is a visit of its own, with a visit's time.
    const cuts = ['>API</a>', '>Branch</label>', '<span class="narrow" aria-hidden="true">Rows</span>'];
    let whole = '';
    let cut = '';
    let release = () => {};
    let held: http.Server;
    let origin = '';

    beforeAll(async () => {
      whole = await (await fetch(`${server.url}/public/index.html`)).text();
      held = http.createServer((request, response) => {
        if (request.url?.startsWith('/public/index.html')) {
          const at = whole.indexOf(cut) + cut.length;
          response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          response.write(whole.slice(0, at));
          new Promise<void>((resolve) => (release = resolve)).then(() => response.end(whole.slice(at)), () => undefined);
          return;
        }
        // Everything else (styles, script, the API) from the server itself.
        const target = new URL(request.url ?? '/', server.url);
        const forwarded = http.request(target, { method: request.method, headers: { ...request.headers, host: target.host } }, (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        });
        request.pipe(forwarded);
      });
      await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
      origin = `http://127.0.0.1:${(held.address() as AddressInfo).port}`;
    });

    afterEach(() => release());

    afterAll(async () => {
      if (!held) return;
      held.closeAllConnections();
      await new Promise((resolve) => held.close(resolve));
    });

    it.each((['desktop', 'phone'] as const).flatMap((name) => cuts.map((at) => [name, at] as const)))('at %s width, held after %s', async (name, at) => {
      cut = at;
      expect(whole.indexOf(cut), cut).toBeGreaterThan(0);
      const watched = await openPage(browser, name === 'desktop' ? DESKTOP : PHONE);
      opened.push({ watched, origin });
      const { page } = watched;
      await page.goto(`${origin}/public/index.html`, { waitUntil: 'commit' });
      const painted = await page
        .waitForFunction(() => performance.getEntriesByType('paint').length > 0, undefined, { polling: 50, timeout: 2000 })
        .then(() => true, () => false);
      release();
      await page.waitForSelector('#versions[aria-busy="false"]', { state: 'attached' });
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      expect({ cut, painted, shifts: await page.evaluate(() => window.__shifts) }).toEqual({ cut, painted: false, shifts: [] });
    });
  });

  it('can be used with the keyboard alone', async () => {
    const { page } = await visit();
    const focused = () =>
      page.evaluate(() => {
        const active = document.activeElement as HTMLElement | null;
        const style = active ? getComputedStyle(active) : undefined;
        return {
          id: active?.id ?? '',
          inRows: Boolean(active?.closest('#rows')),
          toggle: active?.classList.contains('toggle') ?? false,
          outline: style ? style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0 : false,
        };
      });
    let state = await focused();
    for (let i = 0; i < 10 && state.id !== 'f-projectName'; i++) {
      await page.keyboard.press('Tab');
      state = await focused();
    }
    expect(state.id).toBe('f-projectName');
    await page.keyboard.type('delta');
    await afterSearch(page, () => page.keyboard.press('Enter'));
    const rows = await shownRows(page);
    expect(rows.length).toBe(3);
    expect(rows.every((row) => row.projectName === 'delta')).toBe(true);

    for (let i = 0; i < 40 && !state.inRows; i++) {
      await page.keyboard.press('Tab');
      state = await focused();
    }
    expect(state).toMatchObject({ inRows: true, toggle: true, outline: true });
    const uid = await page.evaluate(() => (document.activeElement as HTMLElement).dataset.uid!);
    await page.keyboard.press('Enter');
    const detail = page.locator(`#detail-${uid}`);
    await detail.locator('.markdown em').waitFor();
    expect(await page.getAttribute(`tr.record[data-uid="${uid}"] .toggle`, 'aria-expanded')).toBe('true');
    expect(await detail.innerText()).toContain(coordinates(SEEDS.find((s) => s.uid === uid)!));
    await page.keyboard.press('Escape');
    expect(await detail.count()).toBe(0);
    expect(await page.getAttribute(`tr.record[data-uid="${uid}"] .toggle`, 'aria-expanded')).toBe('false');
    expect((await focused()).toggle).toBe(true);
  });

  describe('when search needs a token', () => {
    let closed: TestServer;

    beforeAll(async () => {
      closed = await startTestServer({ config: { searchPublic: false } });
      await publish(closed, SEEDS.filter((s) => s.projectName === 'delta').map((s) => ({ ...s })));
    });
    afterAll(() => closed?.close());

    it('signs in through generate-token and keeps the token in sessionStorage only', async () => {
      const watched = await visit('', DESKTOP, closed);
      const { page, context } = watched;
      await page.locator('#sign-in').waitFor();
      expect(await page.isHidden('#results')).toBe(true);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('s-username');

      await page.fill('#s-username', 'admin');
      await page.fill('#s-password', 'wrong-password');
      await page.click('#sign-in-form button[type="submit"]');
      await expect.poll(() => page.locator('#sign-in-error').innerText()).not.toBe('');
      expect(await page.isVisible('#sign-in')).toBe(true);

      await page.fill('#s-password', ADMIN_PASSWORD);
      await afterSearch(page, () => page.click('#sign-in-form button[type="submit"]'));
      expect((await shownRows(page)).length).toBe(3);
      expect(await page.isHidden('#sign-in')).toBe(true);
      expect(await page.locator('#session-user').innerText()).toBe('admin');
      const storage = await page.evaluate(() => ({
        session: Object.keys(sessionStorage),
        token: JSON.parse(sessionStorage.getItem('repoadmin.session') ?? '{}').token as string | undefined,
        local: localStorage.length,
        cookie: document.cookie,
      }));
      expect(storage).toMatchObject({ session: ['repoadmin.session'], local: 0, cookie: '' });
      expect(storage.token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      const lastSearch = watched.requests.filter((r) => r.url().includes('/v1/repositories/search')).at(-1)!;
      expect(lastSearch.headers().authorization).toBe(`Bearer ${storage.token}`);
      expect(await page.inputValue('#s-password')).toBe('');

      // The tab keeps it across a reload; a new tab does not have it.
      await afterSearch(page, () => page.reload());
      expect((await shownRows(page)).length).toBe(3);
      const other = await context.newPage();
      await watchPage(watched, other);
      await other.goto(`${closed.url}/public/index.html`);
      await other.locator('#sign-in').waitFor();
      await other.close();

      await afterSearch(page, () => page.click('#sign-out'));
      await page.locator('#sign-in').waitFor();
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    });

    it('takes a project token instead, says why an unknown or revoked one is refused, and sends it on every search', async () => {
      const admin = await closed.adminToken();
      const made = await closed.request('POST', '/v1/tokens', { token: admin, body: { name: 'page', scope: 'read' } });
      expect(made.status).toBe(201);
      const watched = await visit('', DESKTOP, closed);
      const { page } = watched;
      await page.locator('#sign-in').waitFor();

      await page.fill('#s-token', 'rpa_not-one-of-this-server');
      await page.click('#token-form button[type="submit"]');
      await expect.poll(() => page.locator('#token-error').innerText()).toContain('not known to this server');
      expect(await page.isVisible('#sign-in')).toBe(true);
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

      await page.fill('#s-token', made.body.token);
      await afterSearch(page, () => page.click('#token-form button[type="submit"]'));
      expect((await shownRows(page)).length).toBe(3);
      expect(await page.locator('#session-user').innerText()).toBe('admin (project token)');
      expect(await page.inputValue('#s-token')).toBe('');
      const lastSearch = watched.requests.filter((r) => r.url().includes('/v1/repositories/search')).at(-1)!;
      expect(lastSearch.headers().authorization).toBe(`Bearer ${made.body.token}`);
      await afterSearch(page, () => page.reload());
      expect((await shownRows(page)).length).toBe(3);

      // Revoked while the tab is open: the next load asks again.
      expect((await closed.request('DELETE', `/v1/tokens/${made.body.id}`, { token: admin })).status).toBe(204);
      await page.click('#refresh');
      await page.locator('#sign-in').waitFor();
      expect(await page.locator('#sign-in-reason').innerText()).toContain('expired or was revoked');
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    });
  });

  it('says so when the server cannot be reached', async () => {
    const lonely = await startTestServer();
    let closedAlready = false;
    try {
      await publish(lonely, SEEDS.filter((s) => s.artifactId === 'ingest').map((s) => ({ ...s })));
      const { page } = await visit('', DESKTOP, lonely);
      expect((await shownRows(page)).length).toBe(1);
      await lonely.close();
      closedAlready = true;
      await page.click('#refresh');
      await page.waitForSelector('#rows tr.message.error');
      expect(await page.locator('#rows tr.message.error').innerText()).toContain('The server cannot be reached');
      expect(await statusText(page)).toBe('The server cannot be reached');
      expect(await page.getByRole('button', { name: 'Try again' }).isVisible()).toBe(true);
    } finally {
      if (!closedAlready) await lonely.close();
    }
  });
  // 10,000 rows written and a browser driven through them: minutes on busy cores, not a measure of speed.
  it('pages through 10,000 records one page of at most 100 at a time', async () => {
    const big = await startTestServer();
    try {
      // Bulk rows straight into the database, with the server's own row mapping.
      const rows = Array.from({ length: 10_000 }, (_, i) => ({
        ...toRow({
          projectName: `p${i % 5}`,
          branch: 'main',
          groupId: 'org.bulk',
          artifactId: `a${i % 400}`,
          version: `1.${Math.floor(i / 400)}.${i % 7}`,
          repositoryUrl: null,
          creationDate: new Date(Date.UTC(2025, 0, 1) + i * 60_000),
          type: 'LIBRARY',
          latestVersion: false,
          description: null,
        }),
        uid: randomUUID(),
      }));
      for (let i = 0; i < rows.length; i += 1000) await big.db('versions').insert(rows.slice(i, i + 1000));

      const watched = await visit('?latestVersion=false&size=100', DESKTOP, big);
      const { page } = watched;
      expect(await statusText(page)).toBe(`1–100 of ${(10_000).toLocaleString('en-US')} versions`);
      expect(await shownRows(page)).toHaveLength(100);
      await afterSearch(page, () => page.click('[data-go="last"]'));
      expect(await statusText(page)).toBe(`${(9_901).toLocaleString('en-US')}–${(10_000).toLocaleString('en-US')} of ${(10_000).toLocaleString('en-US')} versions`);
      const last = await shownRows(page);
      expect(last).toHaveLength(100);
      // The oldest record is the last one in the default order (newest first).
      expect(last.at(-1)!.datetime).toBe('2025-01-01T00:00:00.000Z');
      const searches = watched.requests.filter((r) => r.url().includes('/v1/repositories/search'));
      expect(searches.length).toBeGreaterThanOrEqual(2);
      expect(searches.every((r) => new URL(r.url()).searchParams.get('size') === '100')).toBe(true);
    } finally {
      await big.close();
    }
  });
});
