// The Jenkins REST client of `repoadmin jobs`: basic auth with an API token, a crumb plus the
// session cookie it is bound to when CSRF protection is on, folder paths, and each Jenkins failure
// turned into one clear AppError naming the item (docs/jobs.md, "Talking to Jenkins").
import ky, { type KyInstance } from 'ky';
import { AppError, type ErrorCode } from '../../common/errors.js';
import { withoutUserInfo } from '../../common/urls.js';
import { GATEWAY_STATUSES } from '../api/http.js';
import { MAX_NAME_SEGMENTS, itemPath, splitName } from './names.js';

export interface JenkinsConnection {
  url: string;
  user: string | undefined;
  token: string | undefined;
  timeoutMs?: number;
  /** The first pause before a read is tried again after a 502, 503 or 504 (300 ms). */
  retryDelayMs?: number;
}

export interface LiveItem {
  fullName: string;
  className: string;
  description: string | null;
}

export interface LiveView {
  name: string;
  className: string;
  description: string | null;
}

export interface JenkinsClient {
  url: string;
  listItems(): Promise<LiveItem[]>;
  listViews(): Promise<LiveView[]>;
  getJobConfig(fullName: string): Promise<string>;
  createItem(fullName: string, xml: string): Promise<void>;
  updateJob(fullName: string, xml: string): Promise<void>;
  deleteJob(fullName: string): Promise<void>;
  getViewConfig(name: string): Promise<string>;
  createView(name: string, xml: string): Promise<void>;
  updateView(name: string, xml: string): Promise<void>;
  deleteView(name: string): Promise<void>;
}

/** How often a read answered 502, 503 or 504 (a proxy, a restarting Jenkins) is tried again. */
const READ_RETRIES = 2;

/** How deep the item listing recurses into folders: as deep as a job name may go (names.ts). */
const FOLDER_DEPTH = MAX_NAME_SEGMENTS - 1;

const ITEM_FIELDS = 'name,fullName,_class,description';

/** `jobs[name,fullName,_class,description,jobs[...]]`, nested FOLDER_DEPTH times. */
export function itemsTree(depth = FOLDER_DEPTH): string {
  return depth === 0 ? `jobs[${ITEM_FIELDS}]` : `jobs[${ITEM_FIELDS},${itemsTree(depth - 1)}]`;
}

interface Crumb {
  header: Record<string, string>;
}

interface RawItem {
  fullName?: string;
  name?: string;
  _class?: string;
  description?: string | null;
  jobs?: RawItem[];
}

export function createJenkinsClient(connection: JenkinsConnection): JenkinsClient {
  const base = connection.url.replace(/\/+$/, '');
  const auth = connection.user && connection.token
    ? { authorization: `Basic ${Buffer.from(`${connection.user}:${connection.token}`).toString('base64')}` }
    : {};
  const http: KyInstance = ky.create({
    prefixUrl: base,
    timeout: connection.timeoutMs ?? 30_000,
    throwHttpErrors: false,
    redirect: 'manual',
    headers: auth,
    // Reads are retried on connection errors and 502/503/504 (docs/jobs.md, "Talking to Jenkins");
    // writes are not. ky retries a status only when it throws for it, which it does not here
    // (throwHttpErrors: false), so `send` retries those statuses itself.
    retry: { limit: 2, methods: ['get'] },
  });
  let crumb: Promise<Crumb> | undefined;

  async function send(
    method: 'get' | 'post',
    path: string,
    what: string,
    init: { body?: string; headers?: Record<string, string>; redirectIsDone?: boolean } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { ...init.headers };
    if (method === 'post') Object.assign(headers, (await (crumb ??= fetchCrumb())).header);
    let response: Response;
    for (let attempt = 1; ; attempt++) {
      try {
        response = await http(path.replace(/^\//, ''), { method, body: init.body, headers });
      } catch (error) {
        throw unreachable(base, error);
      }
      if (method !== 'get' || !GATEWAY_STATUSES.has(response.status) || attempt > READ_RETRIES) break;
      await response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, (connection.retryDelayMs ?? 300) * 2 ** (attempt - 1)));
    }
    // A write that Jenkins did is answered 200, or a redirect for doDelete (to the parent's page);
    // any other redirect comes from in front of Jenkins (a sign-in page), and nothing was done.
    if (isRedirect(response) && !(method === 'post' && init.redirectIsDone)) throw redirected(base, path, response);
    if (response.status >= 400) throw await failure(response, what, connection);
    return response;
  }

  // Crumbs are bound to the web session: keep the cookie the crumb issuer set and send it back.
  async function fetchCrumb(): Promise<Crumb> {
    let response: Response;
    try {
      response = await http('crumbIssuer/api/json', { method: 'get' });
    } catch (error) {
      throw unreachable(base, error);
    }
    if (isRedirect(response)) throw redirected(base, '/crumbIssuer/api/json', response);
    if (response.status === 404) return { header: {} };
    if (response.status >= 400) throw await failure(response, 'fetch a CSRF crumb', connection);
    const body = (await response.json()) as { crumb: string; crumbRequestField: string };
    const cookies = response.headers.getSetCookie().map((cookie) => cookie.split(';')[0]).join('; ');
    return { header: { [body.crumbRequestField]: body.crumb, ...(cookies ? { cookie: cookies } : {}) } };
  }

  // Jenkins reads an update's body as text in the request's charset (AbstractItem and View
  // doConfigDotXml, `req.getReader()`), and without one Jetty decodes it as ISO-8859-1: `Größe`
  // would arrive as `GrÃ¶ÃŸe`. createItem reads bytes and the XML declaration; UTF-8 suits both.
  const xml = (body: string) => ({ body, headers: { 'content-type': 'application/xml; charset=UTF-8' } });
  const viewPath = (name: string) => `/view/${encodeURIComponent(name)}`;

  return {
    url: base,
    async listItems() {
      const response = await send('get', `/api/json?tree=${encodeURIComponent(itemsTree())}`, 'list the jobs');
      const body = (await response.json()) as { jobs?: RawItem[] };
      return flatten(body.jobs ?? []);
    },
    async listViews() {
      const response = await send('get', `/api/json?tree=${encodeURIComponent('views[name,_class,description]')}`, 'list the views');
      const body = (await response.json()) as { views?: { name: string; _class: string; description?: string | null }[] };
      return (body.views ?? []).map((v) => ({ name: v.name, className: v._class, description: v.description ?? null }));
    },
    async getJobConfig(fullName) {
      return (await send('get', `${itemPath(fullName)}/config.xml`, `read job ${fullName}`)).text();
    },
    async createItem(fullName, config) {
      const { parent, name } = splitName(fullName);
      const path = `${parent ? itemPath(parent) : ''}/createItem?name=${encodeURIComponent(name)}`;
      await send('post', path, `create ${fullName}`, xml(config));
    },
    async updateJob(fullName, config) {
      await send('post', `${itemPath(fullName)}/config.xml`, `update job ${fullName}`, xml(config));
    },
    async deleteJob(fullName) {
      await send('post', `${itemPath(fullName)}/doDelete`, `delete job ${fullName}`, { redirectIsDone: true });
    },
    async getViewConfig(name) {
      return (await send('get', `${viewPath(name)}/config.xml`, `read view ${name}`)).text();
    },
    async createView(name, config) {
      await send('post', `/createView?name=${encodeURIComponent(name)}`, `create view ${name}`, xml(config));
    },
    async updateView(name, config) {
      await send('post', `${viewPath(name)}/config.xml`, `update view ${name}`, xml(config));
    },
    async deleteView(name) {
      await send('post', `${viewPath(name)}/doDelete`, `delete view ${name}`, { redirectIsDone: true });
    },
  };
}

function flatten(items: RawItem[], parent?: string): LiveItem[] {
  return items.flatMap((item) => {
    const fullName = item.fullName ?? (parent ? `${parent}/${item.name}` : String(item.name));
    const self: LiveItem = {
      fullName,
      className: item._class ?? '',
      description: item.description ?? null,
    };
    return [self, ...flatten(item.jobs ?? [], fullName)];
  });
}

function isRedirect(response: Response): boolean {
  return response.status >= 300 && response.status < 400 && response.headers.has('location');
}

/**
 * A Jenkins address that redirects (http to https, a missing context path such as /jenkins):
 * following it would turn POSTs into GETs, so the message names the address to use instead. A
 * redirect elsewhere (a sign-in page of a proxy) names no Jenkins address: it says so.
 */
function redirected(base: string, path: string, response: Response): AppError {
  const target = new URL(response.headers.get('location')!, `${base}/`);
  const wanted = path.split('?')[0]!;
  if (!target.pathname.endsWith(wanted)) {
    const shown = withoutUserInfo(`${target.origin}${target.pathname}`);
    return new AppError(
      'unauthorized',
      `Jenkins at ${withoutUserInfo(base)} sends ${wanted} (HTTP ${response.status}) to ${shown}, a sign-in page or a proxy's: nothing was done. Check JENKINS_USER and JENKINS_API_TOKEN, or what stands in front of Jenkins`,
    );
  }
  const address = withoutUserInfo(`${target.origin}${target.pathname.slice(0, -wanted.length)}`.replace(/\/+$/, ''));
  return new AppError(
    'unreachable',
    `Jenkins at ${withoutUserInfo(base)} redirects (HTTP ${response.status}) to ${address}: pass --jenkins-url ${address} or set JENKINS_URL to it`,
  );
}

function unreachable(base: string, error: unknown): AppError {
  const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
  const reason = cause === 'ECONNREFUSED' ? 'connection refused' : cause === 'TimeoutError' ? 'timed out' : cause;
  return new AppError('unreachable', `cannot reach Jenkins at ${base} (${reason}). Check --jenkins-url or JENKINS_URL`, { cause: error });
}

const STATUS_CODES: Record<number, ErrorCode> = { 400: 'failed', 401: 'unauthorized', 403: 'forbidden', 404: 'not_found' };

async function failure(response: Response, what: string, connection: JenkinsConnection): Promise<AppError> {
  const status = response.status;
  const reason = response.headers.get('x-error') ?? firstLine(await response.text());
  const said = reason ? `: ${reason}` : '';
  const code: ErrorCode = STATUS_CODES[status] ?? (status === 503 || status === 502 || status === 504 ? 'unavailable' : 'internal');
  const hint: Partial<Record<ErrorCode, string>> = {
    unauthorized: connection.user
      ? `. Jenkins rejected user ${connection.user}: check JENKINS_USER and JENKINS_API_TOKEN`
      : '. Jenkins wants credentials: set JENKINS_USER and JENKINS_API_TOKEN',
    forbidden: `. User ${connection.user ?? '(anonymous)'} lacks the permission, or the CSRF crumb was refused`,
  };
  return new AppError(code, `Jenkins refused to ${what} (HTTP ${status}${said})${hint[code] ?? ''}`);
}

/** The first readable line of an error page, without HTML tags. */
function firstLine(body: string): string {
  const text = body.replace(/<(script|style)[\s\S]*?<\/\1>/gi, '').replace(/<[^>]+>/g, '\n');
  return text.split('\n').map((line) => line.trim()).find((line) => line !== '')?.slice(0, 200) ?? '';
}
