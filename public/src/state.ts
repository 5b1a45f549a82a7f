// What the page shows (filters, paging, sorting), read from and written to the URL query so a
// view can be bookmarked and shared, and turned into one search request.
import type { SearchFilters, SortField } from '../../common/schemas/repositories.js';

/** The search filters (docs/api.md, "Filters") that have a text box, in form order. */
export const FILTER_FIELDS = ['projectName', 'branch', 'groupId', 'artifactId', 'version', 'type', 'uid'] as const;
export type FilterField = (typeof FILTER_FIELDS)[number];

/**
 * The page's sortable columns, each one the server sorts by. The server also sorts by
 * `repositoryUrl` and `latestVersion` for the older page; this page shows neither as a column.
 */
export const SORT_COLUMNS = ['projectName', 'branch', 'groupId', 'artifactId', 'version', 'type', 'creationDate'] as const satisfies readonly SortField[];

export type SortDirection = 'ASC' | 'DESC';
export const DEFAULT_PAGE_SIZE = 25;
/** The server's limit (PAGE_SIZE_MAX): the page never asks for more. */
export const MAX_PAGE_SIZE = 100;
/** Longer filter values cannot match anything the server stores (FILTER_MAX). */
const FILTER_MAX = 512;

export interface ViewState {
  filters: Partial<Record<FilterField, string>>;
  /** Only the latest record of each project, artifact and branch; on unless the URL says otherwise. */
  latestOnly: boolean;
  /** 1-based. */
  page: number;
  size: number;
  /** Absent: the server's default order, newest first. */
  sortField?: SortField;
  sortDirection: SortDirection;
}

export function defaultState(): ViewState {
  return { filters: {}, latestOnly: true, page: 1, size: DEFAULT_PAGE_SIZE, sortDirection: 'ASC' };
}

function wholeNumber(text: string | null): number | undefined {
  if (text === null || !/^\s*\d{1,9}\s*$/.test(text)) return undefined;
  return Number(text);
}

function isSortField(value: string): value is (typeof SORT_COLUMNS)[number] {
  return (SORT_COLUMNS as readonly string[]).includes(value);
}

/** Reads a view from a URL query. Anything unusable falls back to its default instead of failing. */
export function readState(params: URLSearchParams): ViewState {
  const state = defaultState();
  for (const field of FILTER_FIELDS) {
    const value = params.get(field)?.trim().slice(0, FILTER_MAX);
    if (value) state.filters[field] = value;
  }
  const latest = params.get('latestVersion');
  if (latest !== null && /^(false|0|no|all)$/i.test(latest.trim())) state.latestOnly = false;
  const page = wholeNumber(params.get('page'));
  if (page !== undefined) state.page = Math.max(1, page);
  const size = wholeNumber(params.get('size'));
  if (size !== undefined) state.size = Math.min(MAX_PAGE_SIZE, Math.max(1, size));
  const sortField = params.get('sortField');
  if (sortField !== null && isSortField(sortField)) {
    state.sortField = sortField;
    state.sortDirection = params.get('sortDirection')?.toUpperCase() === 'DESC' ? 'DESC' : 'ASC';
  }
  return state;
}

/** The URL query of a view, leaving out what equals the default so shared links stay short. */
export function writeState(state: ViewState): URLSearchParams {
  const params = new URLSearchParams();
  for (const field of FILTER_FIELDS) {
    const value = state.filters[field];
    if (value) params.set(field, value);
  }
  if (!state.latestOnly) params.set('latestVersion', 'false');
  if (state.sortField) {
    params.set('sortField', state.sortField);
    params.set('sortDirection', state.sortDirection);
  }
  if (state.size !== DEFAULT_PAGE_SIZE) params.set('size', String(state.size));
  if (state.page !== 1) params.set('page', String(state.page));
  return params;
}

export function sameView(a: ViewState, b: ViewState): boolean {
  return writeState(a).toString() === writeState(b).toString();
}

export function hasFilters(state: ViewState): boolean {
  return FILTER_FIELDS.some((field) => Boolean(state.filters[field]));
}

/** The body and query string of `POST /v1/repositories/search` for a view. */
export function searchRequest(state: ViewState): { body: SearchFilters; query: URLSearchParams } {
  const body: SearchFilters = {};
  for (const field of FILTER_FIELDS) {
    const value = state.filters[field];
    if (value) body[field] = value;
  }
  if (state.latestOnly) body.latestVersion = true;
  const query = new URLSearchParams({
    page: String(state.page),
    size: String(Math.min(MAX_PAGE_SIZE, Math.max(1, state.size))),
  });
  if (state.sortField) {
    query.set('sortField', state.sortField);
    query.set('sortDirection', state.sortDirection);
  }
  return { body, query };
}

/** The next sort after a click on a column header: a new column starts ascending (dates newest first). */
export function nextSort(state: ViewState, field: SortField): Pick<ViewState, 'sortField' | 'sortDirection'> {
  const current = effectiveSort(state);
  if (current.field === field) return { sortField: field, sortDirection: current.direction === 'ASC' ? 'DESC' : 'ASC' };
  return { sortField: field, sortDirection: field === 'creationDate' ? 'DESC' : 'ASC' };
}

/** The order the rows are in: without a sort field the server lists the newest first. */
export function effectiveSort(state: ViewState): { field: SortField; direction: SortDirection } {
  return state.sortField
    ? { field: state.sortField, direction: state.sortDirection }
    : { field: 'creationDate', direction: 'DESC' };
}
