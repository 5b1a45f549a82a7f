// The Jenkins REST client of `repoadmin jobs`: basic auth with an API token, a crumb plus the
// session cookie it is bound to when CSRF protection is on, folder paths, and each Jenkins failure
// turned into one clear AppError naming the item (docs/jobs.md, "Talking to Jenkins"). Timeouts,
// retries and network failures are the shared HTTP core's (cli/http.ts).
import { HTTPError, TimeoutError } from 'ky';
import { AppError, type ErrorCode } from '../../common/errors.js';
import { withoutUserInfo } from '../../common/urls.js';
import { createClient, DEFAULT_TIMEOUT_MS, GATEWAY_STATUSES, networkFailure, retryFor, type Peer } from '../http.js';
import { MAX_NAME_SEGMENTS, itemPath, splitName } from './names.js';

export interface JenkinsConnection {
  url: string;
  user: string | undefined;
  token: string | undefined;
  timeoutMs?: number;
  /** The first pause before a read is tried again after a 502, 503 or 504 (300 ms). */
  retryDelayMs?: number;
  /** How long a delete may take before it is given up (DELETE_WAIT_MS). */
  deleteWaitMs?: number;
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
  /** `onSlow` is called once when Jenkins has not answered after DELETE_NOTICE_MS. */
  deleteJob(fullName: string, onSlow?: (waitedMs: number) => void): Promise<void>;
  getViewConfig(name: string): Promise<string>;
  createView(name: string, xml: string): Promise<void>;
  updateView(name: string, xml: string): Promise<void>;
  deleteView(name: string): Promise<void>;
}

/**
 * How long a job delete may take. Jenkins answers it only when done: AbstractItem.delete stops the
 * job's running builds and waits up to 15 s for them, then removes the job's folder with all its
 * builds (performDelete), which on a long history takes longer still.
 */
export const DELETE_WAIT_MS = 5 * 60_000;
/** After this long a delete says that it is waiting. */
export const DELETE_NOTICE_MS = 3_000;
/** How often a delete that found another one under way asks again. */
export const DELETE_RETRY_MS = 1_000;

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

interface SendOptions {
  body?: string;
  headers?: Record<string, string>;
  /** doDelete: a redirect to a page of Jenkins itself (the parent's) means done. */
  redirectIsDone?: boolean;
  timeoutMs?: number;
  /** What a timeout means for this request, instead of the general "no answer". */
  timedOut?: () => AppError;
  /** Statuses the caller reads itself instead of failing with them. */
  answers?: number[];
}

export function createJenkinsClient(connection: JenkinsConnection): JenkinsClient {
  const base = connection.url.replace(/\/+$/, '');
  const timeout = connection.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const auth = connection.user && connection.token
    ? { authorization: `Basic ${Buffer.from(`${connection.user}:${connection.token}`).toString('base64')}` }
    : undefined;
  // Redirects come back to us: following one would turn a POST into a GET (redirected() below).
  const http = createClient({ baseUrl: base, timeoutMs: timeout, headers: auth, redirect: 'manual' });
  const peer: Peer = {
    name: `Jenkins at ${withoutUserInfo(base)}`,
    addressHint: 'Check --jenkins-url or JENKINS_URL',
    refusedHint: 'Is Jenkins running? Check --jenkins-url or JENKINS_URL',
    timeoutHint: 'Is Jenkins overloaded? Set REPOADMIN_TIMEOUT (seconds) to wait longer',
  };
  let crumb: Promise<Crumb> | undefined;

  /** The answer to a request, or the AppError that says why there is none. */
  async function exchange(method: 'get' | 'post', path: string, init: SendOptions): Promise<Response> {
    try {
      // Reads are tried again on connection errors and 429/502/503/504; writes never.
      return await http(path.replace(/^\//, ''), {
        method,
        body: init.body,
        // ky would take `headers: undefined` for "no headers" and drop the authorization too.
        ...(init.headers ? { headers: init.headers } : {}),
        retry: retryFor(method === 'get', { retryDelayMs: connection.retryDelayMs }),
        ...(init.timeoutMs ? { timeout: init.timeoutMs } : {}),
      });
    } catch (error) {
      if (error instanceof HTTPError) return error.response;
      if (error instanceof TimeoutError && init.timedOut) throw init.timedOut();
      throw networkFailure(error, peer, init.timeoutMs ?? timeout);
    }
  }

  async function send(method: 'get' | 'post', path: string, what: string, init: SendOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { ...init.headers };
    if (method === 'post') Object.assign(headers, (await currentCrumb()).header);
    const response = await exchange(method, path, { ...init, headers });
    // A write that Jenkins did is answered 200, or for doDelete a redirect to the parent's page;
    // any other redirect comes from in front of Jenkins (a sign-in page), and nothing was done.
    if (isRedirect(response)) {
      if (method === 'post' && init.redirectIsDone && staysOnJenkins(base, response)) return response;
      throw redirected(base, path, response);
    }
    if (response.status >= 400 && !init.answers?.includes(response.status)) throw await failure(response, what, connection);
    return response;
  }

  /** One crumb for the run; a failed fetch is not kept, so the next write asks again. */
  function currentCrumb(): Promise<Crumb> {
    crumb ??= fetchCrumb().catch((error: unknown) => {
      crumb = undefined;
      throw error;
    });
    return crumb;
  }

  // Crumbs are bound to the web session: keep the cookie the crumb issuer set and send it back.
  // The header's name is the issuer's (CrumbIssuer.getCrumbRequestField), `Jenkins-Crumb` by default.
  async function fetchCrumb(): Promise<Crumb> {
    const response = await exchange('get', '/crumbIssuer/api/json', {});
    if (isRedirect(response)) throw redirected(base, '/crumbIssuer/api/json', response);
    if (response.status === 404) return { header: {} };
    if (response.status >= 400) throw await failure(response, 'fetch a CSRF crumb', connection);
    const body = (await readJson(response, 'the CSRF crumb')) as { crumb?: unknown; crumbRequestField?: unknown };
    if (typeof body.crumb !== 'string' || typeof body.crumbRequestField !== 'string') {
      throw new AppError('unreachable', `${peer.name} answered /crumbIssuer/api/json without a crumb and its field name: is --jenkins-url the address of Jenkins itself?`);
    }
    const cookies = response.headers.getSetCookie().map((cookie) => cookie.split(';')[0]).join('; ');
    return { header: { [body.crumbRequestField]: body.crumb, ...(cookies ? { cookie: cookies } : {}) } };
  }

  /** A JSON answer, or a clear error when a 200 carries something else (a sign-in page, a proxy's). */
  async function readJson(response: Response, what: string): Promise<unknown> {
    const text = await response.text();
    try {
      return JSON.parse(text);
    } catch {
      const type = response.headers.get('content-type')?.split(';')[0]?.trim() || 'no content type';
      throw new AppError(
        'unreachable',
        `${peer.name} answered the request for ${what} with ${type}, not JSON: is --jenkins-url (or JENKINS_URL) the address of Jenkins itself, not of a sign-in page or a proxy in front of it?`,
      );
    }
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
      const body = (await readJson(response, 'the list of jobs')) as { jobs?: RawItem[] };
      return flatten(body.jobs ?? []);
    },
    async listViews() {
      const response = await send('get', `/api/json?tree=${encodeURIComponent('views[name,_class,description]')}`, 'list the views');
      const body = (await readJson(response, 'the list of views')) as { views?: { name: string; _class: string; description?: string | null }[] };
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
    async deleteJob(fullName, onSlow) {
      const wait = Math.max(connection.deleteWaitMs ?? DELETE_WAIT_MS, timeout);
      const started = Date.now();
      const notice = onSlow ? setTimeout(() => onSlow(Date.now() - started), Math.min(DELETE_NOTICE_MS, wait)) : undefined;
      const timedOut = () =>
        new AppError('unreachable', `Jenkins has not finished deleting job ${fullName} after ${Math.round(wait / 1000)} s and may still be at it: run apply again to complete the plan`);
      const what = `delete job ${fullName}`;
      // A delete already under way (an apply cut short while Jenkins stopped the job's builds, or a
      // person) makes Jenkins refuse a second one with a 400 "... is currently being deleted"
      // (AbstractItem.delete, ItemDeletion.register) while it finishes the first: ask again until
      // that one is done. A 404 then means it was.
      let another = false;
      try {
        for (;;) {
          const left = wait - (Date.now() - started);
          if (left <= 0) throw timedOut();
          const response = await send('post', `${itemPath(fullName)}/doDelete`, what, { redirectIsDone: true, timeoutMs: left, timedOut, answers: [400, 404] });
          if (response.status < 400 || (response.status === 404 && another)) return;
          if (response.status === 404 || !BEING_DELETED.test(await response.clone().text())) throw await failure(response, what, connection);
          another = true;
          await new Promise((resolve) => setTimeout(resolve, Math.min(DELETE_RETRY_MS, left)));
        }
      } finally {
        clearTimeout(notice);
      }
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
 * doDoDelete redirects to the parent's page (AbstractItem.doDoDelete, View.doDoDelete): an address
 * of the same Jenkins, under its context path, and not its sign-in page. Anything else (another
 * host, a sign-in page) means the delete never reached Jenkins.
 */
function staysOnJenkins(base: string, response: Response): boolean {
  const target = new URL(response.headers.get('location')!, `${base}/`);
  const jenkins = new URL(`${base}/`);
  const signIn = /\/(login|loginError|securityRealm|j_spring_security_check|j_security_check)(\/|$|\?)/.test(target.pathname);
  return target.origin === jenkins.origin && target.pathname.startsWith(jenkins.pathname) && !signIn;
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

/** Messages.AbstractItem_BeingDeleted (and AbstractFolder's): "{0} is currently being deleted". */
const BEING_DELETED = /is currently being deleted/;

const STATUS_CODES: Record<number, ErrorCode> = { 400: 'failed', 401: 'unauthorized', 403: 'forbidden', 404: 'not_found' };

async function failure(response: Response, what: string, connection: JenkinsConnection): Promise<AppError> {
  const status = response.status;
  const reason = response.headers.get('x-error') ?? firstLine(await response.text());
  const said = reason ? `: ${reason}` : '';
  const code: ErrorCode = STATUS_CODES[status] ?? (GATEWAY_STATUSES.has(status) ? 'unavailable' : 'internal');
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
