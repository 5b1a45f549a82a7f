// The package page: reads the view from the URL, asks the server for one page of version records
// and keeps the table, the pager, the sort headers and the URL in step.
import type { SearchResult, SortField, VersionInformation } from '../../common/schemas/repositories.js';
import { ApiError, environments, generateToken, promotions, search, whoAmI } from './api.js';
import { detailRow, environmentsTable, h, messageRow, promotionList, recordRow } from './render.js';
import { clearSession, loadSession, saveSession, type Session } from './session.js';
import {
  FILTER_FIELDS,
  effectiveSort,
  hasFilters,
  nextSort,
  readState,
  sameView,
  searchRequest,
  writeState,
  type ViewState,
} from './state.js';

/** A list left open in a tab is reloaded this often while it is visible and nobody is using it. */
const REFRESH_MS = 60_000;

function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page has no #${id}`);
  return element as T;
}

const form = byId<HTMLFormElement>('filters');
const filtersToggle = byId<HTMLButtonElement>('filters-toggle');
const filtersSummary = byId<HTMLElement>('filters-summary');
const latestBox = byId<HTMLInputElement>('f-latest');
const clearButton = byId<HTMLButtonElement>('clear');
const refreshButton = byId<HTMLButtonElement>('refresh');
const sizeSelect = byId<HTMLSelectElement>('size');
const table = byId<HTMLTableElement>('versions');
const rows = byId<HTMLTableSectionElement>('rows');
const status = byId<HTMLElement>('status');
const results = byId<HTMLElement>('results');
const signIn = byId<HTMLElement>('sign-in');
const signInForm = byId<HTMLFormElement>('sign-in-form');
const signInReason = byId<HTMLElement>('sign-in-reason');
const signInError = byId<HTMLElement>('sign-in-error');
const tokenForm = byId<HTMLFormElement>('token-form');
const tokenError = byId<HTMLElement>('token-error');
const sessionBox = byId<HTMLElement>('session');
const sessionUser = byId<HTMLElement>('session-user');
const signOutButton = byId<HTMLButtonElement>('sign-out');
const environmentsSection = byId<HTMLElement>('environments');
const environmentsBody = byId<HTMLElement>('environments-body');
const topPager = results.querySelector<HTMLElement>('.pager')!;
/** The same pager again under the table, for long pages; shown once there is more than one page. */
const bottomPager = topPager.cloneNode(true) as HTMLElement;
bottomPager.classList.add('bottom');
bottomPager.setAttribute('aria-label', 'Pages, end of list');
bottomPager.hidden = true;
results.append(bottomPager);
const pagers = [topPager, bottomPager];
const sortHeaders = [...document.querySelectorAll<HTMLTableCellElement>('th[data-sort]')];

let view: ViewState = readState(new URLSearchParams(window.location.search));
let session: Session | undefined = loadSession();
let result: SearchResult | undefined;
let inFlight: AbortController | undefined;
let loadedAt = 0;
/** The projects of a page whose environments are shown at most (one request each). */
const ENVIRONMENT_PROJECTS_MAX = 5;
/** Promotions shown in a record's detail. */
const PROMOTIONS_SHOWN = 10;
/** Records whose detail is open; they stay open when the same page is loaded again. */
const open = new Set<string>();
const records = new Map<string, VersionInformation>();

function input(field: string): HTMLInputElement {
  return byId<HTMLInputElement>(`f-${field}`);
}

function urlOf(state: ViewState): string {
  const query = writeState(state).toString();
  return `${window.location.pathname}${query ? `?${query}` : ''}`;
}

/** Shows a view in the form, the size choice and the sort headers. */
function showView(state: ViewState): void {
  for (const field of FILTER_FIELDS) input(field).value = state.filters[field] ?? '';
  latestBox.checked = state.latestOnly;
  const size = String(state.size);
  if (![...sizeSelect.options].some((option) => option.value === size)) {
    sizeSelect.append(h('option', { value: size }, size));
  }
  sizeSelect.value = size;
  const sort = effectiveSort(state);
  for (const header of sortHeaders) {
    const field = header.dataset.sort;
    if (field === sort.field) header.setAttribute('aria-sort', sort.direction === 'ASC' ? 'ascending' : 'descending');
    else header.removeAttribute('aria-sort');
  }
  const filters = FILTER_FIELDS.map((field) => state.filters[field]).filter(Boolean);
  filtersSummary.textContent = filterSummary(state);
  document.title = `${filters.length ? `${filters.join(' · ')} – ` : ''}Packages · repoadmin`;
}

/** What the folded filter card says it holds: `Project delta · Type LIBRARY · latest only`. */
function filterSummary(state: ViewState): string {
  const used = FILTER_FIELDS.filter((field) => state.filters[field]).map((field) => {
    const label = document.querySelector(`label[for="f-${field}"]`)?.textContent ?? field;
    return `${label} ${state.filters[field]}`;
  });
  return [...used, state.latestOnly ? 'latest only' : 'all versions'].join(' · ');
}

/** Unfolds or folds the filter card (a phone; on a wide screen the card is always shown). */
function setFiltersOpen(open: boolean): void {
  form.classList.toggle('open', open);
  filtersToggle.setAttribute('aria-expanded', String(open));
}

function filtersFold(): boolean {
  return getComputedStyle(filtersToggle).display !== 'none';
}

/** Moves to another view: into the URL (a new history entry unless `replace`), then loads it. */
function go(next: ViewState, replace = false): void {
  const changed = !sameView(next, view);
  view = next;
  const url = urlOf(view);
  if (replace || !changed) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  if (changed) open.clear();
  showView(view);
  void load();
}

function readForm(): ViewState {
  const filters: ViewState['filters'] = {};
  for (const field of FILTER_FIELDS) {
    const value = input(field).value.trim();
    if (value) filters[field] = value;
  }
  return { ...view, filters, latestOnly: latestBox.checked, page: 1 };
}

function setBusy(busy: boolean): void {
  table.setAttribute('aria-busy', String(busy));
  table.classList.toggle('loading', busy);
}

function updatePagers(current: SearchResult | undefined): void {
  const page = current?.page.currentPage ?? view.page;
  const pages = current?.page.totalPages ?? 0;
  for (const pager of pagers) {
    const label = pager.querySelector<HTMLElement>('[data-page-label]');
    if (label) label.textContent = pages > 0 ? `Page ${page.toLocaleString()} of ${pages.toLocaleString()}` : '';
    for (const button of pager.querySelectorAll<HTMLButtonElement>('button[data-go]')) {
      const back = button.dataset.go === 'first' || button.dataset.go === 'prev';
      button.disabled = !current || pages === 0 || (back ? page <= 1 : page >= pages);
    }
  }
  bottomPager.hidden = !current || pages <= 1;
}

function statusText(current: SearchResult): string {
  const { totalElements, currentPage, numberOfElements } = current.page;
  const scope = view.latestOnly ? 'latest versions' : 'versions';
  if (totalElements === 0) return `No ${scope} found`;
  const first = (currentPage - 1) * view.size + 1;
  const last = first + numberOfElements - 1;
  const total = totalElements.toLocaleString();
  if (numberOfElements === 0) return `${total} ${scope}; this page is past the end`;
  return `${first.toLocaleString()}–${last.toLocaleString()} of ${total} ${scope}`;
}

function button(text: string, action: () => void, className = 'ghost'): HTMLElement {
  const element = h('button', { type: 'button', class: className }, text);
  element.addEventListener('click', action);
  return element;
}

function renderRows(current: SearchResult): void {
  const focusedUid = (document.activeElement as HTMLElement | null)?.closest?.('#rows [data-uid]')?.getAttribute('data-uid');
  records.clear();
  const fragment = document.createDocumentFragment();
  const details: (() => void)[] = [];
  for (const record of current.versionInformation) {
    records.set(record.uid, record);
    const expanded = open.has(record.uid);
    fragment.append(recordRow(record, expanded));
    if (expanded) details.push(() => openDetail(record.uid, false));
  }
  if (current.versionInformation.length === 0) {
    const actions: HTMLElement[] = [];
    if (view.latestOnly) actions.push(button('Show all versions', () => go({ ...view, latestOnly: false, page: 1 })));
    if (hasFilters(view)) actions.push(button('Clear the filters', () => go({ ...view, filters: {}, page: 1 })));
    if (current.page.totalElements > 0) actions.push(button('Go to the first page', () => go({ ...view, page: 1 })));
    const text = hasFilters(view) ? 'Nothing matches these filters. Values match exactly; use * as a wildcard.' : 'Nothing has been published yet.';
    fragment.append(messageRow('empty', 'No versions found', text, ...actions));
  }
  rows.replaceChildren(fragment);
  for (const restore of details) restore();
  if (focusedUid) rows.querySelector<HTMLElement>(`tr.record[data-uid="${CSS.escape(focusedUid)}"] .toggle`)?.focus();
}

function renderError(error: ApiError): void {
  const retry = button('Try again', () => void load(), 'primary');
  let title: string;
  let text: string;
  switch (error.code) {
    case 'unreachable':
    case 'unavailable':
      title = 'The server cannot be reached';
      text =
        error.code === 'unreachable'
          ? `No answer from ${window.location.host}. It may be down or restarting; the list will load again when it is back.`
          : `The server answered but cannot reach its database (${error.message}).`;
      break;
    case 'forbidden':
      title = 'This account may not list packages';
      text = error.message;
      break;
    case 'validation':
      title = 'The server did not accept this search';
      text = error.message;
      break;
    case 'rate_limited':
      title = 'Too many requests';
      text = `${error.message} Try again in a moment.`;
      break;
    default:
      title = 'The list could not be loaded';
      text = `${error.message} (HTTP ${error.status}).`;
  }
  status.textContent = title;
  rows.replaceChildren(messageRow('error', title, text, retry));
  result = undefined;
  updatePagers(undefined);
}

function showSignIn(reason: string): void {
  results.hidden = true;
  signIn.hidden = false;
  signInReason.textContent = reason;
  status.textContent = 'Sign-in needed';
  setBusy(false);
  byId<HTMLInputElement>('s-username').focus();
}

function showSession(): void {
  sessionBox.hidden = !session;
  sessionUser.textContent = session ? `${session.username}${session.expiresAt === null ? ' (project token)' : ''}` : '';
}

/** Loads the current view. `quiet` keeps the rows as they are until the answer is in (auto refresh). */
async function load(quiet = false): Promise<void> {
  inFlight?.abort();
  const controller = new AbortController();
  inFlight = controller;
  if (!quiet) {
    setBusy(true);
    status.textContent = 'Loading versions…';
  }
  const { body, query } = searchRequest(view);
  try {
    const answer = await search(body, query, session?.token, controller.signal);
    if (controller.signal.aborted) return;
    const pages = answer.page.totalPages;
    if (pages > 0 && view.page > pages && answer.versionInformation.length === 0) {
      // A bookmarked page past the end (records were removed): show the last one instead.
      go({ ...view, page: pages }, true);
      return;
    }
    result = answer;
    loadedAt = Date.now();
    results.hidden = false;
    signIn.hidden = true;
    renderRows(answer);
    status.textContent = statusText(answer);
    updatePagers(answer);
    void loadEnvironments(answer, controller.signal);
  } catch (error) {
    if (controller.signal.aborted) return;
    if (!(error instanceof ApiError)) throw error;
    if (error.code === 'unauthorized') {
      const expired = session !== undefined;
      session = undefined;
      clearSession();
      showSession();
      showSignIn(expired ? 'Your sign-in has expired or was revoked. Sign in again to see the packages.' : 'This server lists packages to signed-in users only.');
      return;
    }
    renderError(error);
  } finally {
    if (inFlight === controller) {
      inFlight = undefined;
      setBusy(false);
    }
  }
}

/**
 * The environments of the projects on the page, below the list: filled in once the rows are shown,
 * so that nothing above it moves. A project without environments, or one the server will not show,
 * is left out; the section stays hidden when none is left.
 */
async function loadEnvironments(current: SearchResult, signal: AbortSignal): Promise<void> {
  const projects = [...new Set(current.versionInformation.map((r) => r.projectName))].slice(0, ENVIRONMENT_PROJECTS_MAX);
  const lists = await Promise.all(projects.map((project) => environments(project, session?.token, signal).catch(() => undefined)));
  if (signal.aborted) return;
  const shown = lists.filter((list) => list !== undefined && list.environments.length > 0);
  environmentsBody.replaceChildren(...shown.map((list) => environmentsTable(list!)));
  environmentsSection.hidden = shown.length === 0;
}

/** The promotion history of the record's artifact in its detail. */
async function loadPromotions(record: VersionInformation, into: HTMLElement): Promise<void> {
  const heading = into.firstElementChild!;
  try {
    const key = { projectName: record.projectName, groupId: record.groupId, artifactId: record.artifactId };
    const answer = await promotions(key, PROMOTIONS_SHOWN, session?.token, AbortSignal.timeout(20_000));
    into.replaceChildren(heading, ...promotionList(answer.promotions, answer.page.totalElements).filter((c): c is Node => c instanceof Node));
  } catch (error) {
    const message = error instanceof ApiError ? error.message : 'no answer';
    into.replaceChildren(heading, h('p', { class: 'muted' }, `The promotions could not be loaded (${message}).`));
  }
}

async function openDetail(uid: string, focus: boolean): Promise<void> {
  const row = rows.querySelector<HTMLElement>(`tr.record[data-uid="${CSS.escape(uid)}"]`);
  const record = records.get(uid);
  if (!row || !record) return;
  open.add(uid);
  row.classList.add('open');
  row.querySelector('.toggle')?.setAttribute('aria-expanded', 'true');
  const detail = detailRow(record);
  detail.showAll.addEventListener('click', () =>
    go({
      ...view,
      filters: { projectName: record.projectName, branch: record.branch, groupId: record.groupId, artifactId: record.artifactId },
      latestOnly: false,
      page: 1,
      sortField: 'version',
      sortDirection: 'DESC',
    }),
  );
  row.after(detail.row);
  if (focus) row.querySelector<HTMLElement>('.toggle')?.focus();
  void loadPromotions(record, detail.promotions);
  if (record.description) {
    try {
      const { renderMarkdown } = await import('./markdown.js');
      detail.description.replaceChildren(renderMarkdown(record.description));
    } catch {
      detail.description.replaceChildren(h('p', { class: 'error-text' }, 'The description could not be shown.'), h('pre', {}, record.description));
    }
  }
}

function closeDetail(uid: string): void {
  open.delete(uid);
  const row = rows.querySelector<HTMLElement>(`tr.record[data-uid="${CSS.escape(uid)}"]`);
  row?.classList.remove('open');
  row?.querySelector('.toggle')?.setAttribute('aria-expanded', 'false');
  rows.querySelector(`tr.detail[data-uid="${CSS.escape(uid)}"]`)?.remove();
}

function toggleDetail(uid: string): void {
  if (open.has(uid)) closeDetail(uid);
  else void openDetail(uid, true);
}

async function copy(text: string, feedback: HTMLElement | null): Promise<void> {
  let done = false;
  try {
    await navigator.clipboard.writeText(text);
    done = true;
  } catch {
    // Not a secure context (plain http on a host name): fall back to a selected text area.
    const area = h('textarea', { readonly: true, class: 'offscreen' }) as HTMLTextAreaElement;
    area.value = text;
    document.body.append(area);
    area.select();
    done = document.execCommand('copy');
    area.remove();
  }
  if (feedback) {
    feedback.textContent = done ? 'Copied' : 'Select the text to copy it';
    window.setTimeout(() => (feedback.textContent = ''), 2500);
  }
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  go(readForm());
  // On a phone the card folds away again so that the results are on the first screen.
  if (filtersFold() && form.classList.contains('open')) {
    setFiltersOpen(false);
    filtersToggle.focus();
  }
});

filtersToggle.addEventListener('click', () => {
  const open = !form.classList.contains('open');
  setFiltersOpen(open);
  if (open) input(FILTER_FIELDS[0]).focus();
});

clearButton.addEventListener('click', () => {
  go({ ...view, filters: {}, latestOnly: true, page: 1 });
  input(FILTER_FIELDS[0]).focus();
});

refreshButton.addEventListener('click', () => void load());

sizeSelect.addEventListener('change', () => go({ ...view, size: Number(sizeSelect.value), page: 1 }));

for (const pager of pagers) {
  pager.addEventListener('click', (event) => {
    const target = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-go]');
    if (!target || target.disabled || !result) return;
    const pages = result.page.totalPages;
    const page = { first: 1, prev: view.page - 1, next: view.page + 1, last: pages }[target.dataset.go ?? ''] ?? view.page;
    go({ ...view, page: Math.min(Math.max(page, 1), Math.max(pages, 1)) });
    if (pager === bottomPager) table.focus({ preventScroll: true });
    if (pager === bottomPager) table.scrollIntoView({ block: 'start' });
  });
}

for (const header of sortHeaders) {
  header.querySelector('button')?.addEventListener('click', () => {
    go({ ...view, ...nextSort(view, header.dataset.sort as SortField), page: 1 });
  });
}

rows.addEventListener('click', (event) => {
  const target = event.target as HTMLElement;
  const copyButton = target.closest<HTMLElement>('button[data-copy]');
  if (copyButton) {
    void copy(copyButton.dataset.copy ?? '', copyButton.parentElement?.querySelector('.copied') ?? null);
    return;
  }
  const record = target.closest<HTMLElement>('tr.record');
  if (!record?.dataset.uid) return;
  // A click anywhere on a row opens it, unless the reader is selecting text.
  if (!target.closest('.toggle') && window.getSelection()?.toString()) return;
  toggleDetail(record.dataset.uid);
});

rows.addEventListener('keydown', (event) => {
  if (event.key !== 'Escape') return;
  const uid = (event.target as HTMLElement).closest<HTMLElement>('[data-uid]')?.dataset.uid;
  if (uid && open.has(uid)) {
    closeDetail(uid);
    rows.querySelector<HTMLElement>(`tr.record[data-uid="${CSS.escape(uid)}"] .toggle`)?.focus();
  }
});

/** Keeps the session the server confirmed and shows the results. */
function signedIn(confirmed: Session): void {
  session = confirmed;
  saveSession(session);
  showSession();
  signIn.hidden = true;
  results.hidden = false;
  void load();
}

/** Shows why a sign-in was refused beside its form, and selects what to type again. */
function refused(error: unknown, message: HTMLElement, retype: HTMLInputElement): void {
  if (!(error instanceof ApiError)) throw error;
  message.textContent =
    error.code === 'unreachable' ? 'The server cannot be reached. Try again when it is back.' : error.message;
  retype.select();
}

signInForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const username = byId<HTMLInputElement>('s-username').value.trim();
  const password = byId<HTMLInputElement>('s-password');
  const submit = signInForm.querySelector<HTMLButtonElement>('button[type="submit"]');
  if (submit) submit.disabled = true;
  signInError.textContent = '';
  generateToken(username, password.value)
    .then((answer) => {
      password.value = '';
      signedIn({ token: answer.token, username: answer.username, expiresAt: answer.expiresAt });
    })
    .catch((error: unknown) => refused(error, signInError, password))
    .finally(() => {
      if (submit) submit.disabled = false;
    });
});

/** A project token instead of a password: the server says whose it is before the page keeps it. */
tokenForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const input = byId<HTMLInputElement>('s-token');
  const token = input.value.trim();
  const submit = tokenForm.querySelector<HTMLButtonElement>('button[type="submit"]');
  if (submit) submit.disabled = true;
  tokenError.textContent = '';
  whoAmI(token)
    .then((me) => {
      input.value = '';
      signedIn({ token, username: me.username, expiresAt: null });
    })
    .catch((error: unknown) => refused(error, tokenError, input))
    .finally(() => {
      if (submit) submit.disabled = false;
    });
});

signOutButton.addEventListener('click', () => {
  session = undefined;
  clearSession();
  showSession();
  void load();
});

window.addEventListener('popstate', () => {
  view = readState(new URLSearchParams(window.location.search));
  open.clear();
  showView(view);
  void load();
});

/** Reloads the list while the tab is visible, unless someone is reading a detail or typing. */
function refreshIfIdle(): void {
  const active = document.activeElement;
  const busy = open.size > 0 || inFlight !== undefined || results.hidden || active instanceof HTMLInputElement;
  if (!document.hidden && !busy && Date.now() - loadedAt >= REFRESH_MS) void load(true);
}
window.setInterval(refreshIfIdle, REFRESH_MS / 4);
document.addEventListener('visibilitychange', refreshIfIdle);

showSession();
go(view, true);
