// A Jenkins simulator for tests: a real HTTP server on 127.0.0.1 (port 0) that speaks the part of
// Jenkins' HTTP API that `repoadmin jobs` uses, as Jenkins does it. Each behaviour cites the
// Jenkins documentation or source it follows. It parses and re-serialises configs with
// @xmldom/xmldom (not the production XML code), as XStream would: `plugin="..."` attributes,
// `<?xml version='1.1' ...?>`, two-space indentation, and job properties in its own order.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DOMParser, type Element, type Node } from '@xmldom/xmldom';

export interface SimulatorOptions {
  /**
   * `strict`: a crumb bound to the session is required on every POST, as for password logins and
   * Jenkins before 2.96; `off`: no CSRF protection, the crumb issuer answers 404.
   */
  csrf?: 'strict' | 'off';
  /** User -> API token. Without users, anyone may do anything (security disabled). */
  users?: Record<string, string>;
}

interface SimItem {
  className: string;
  /** As Jenkins stores and returns it. */
  xml: string;
  /** Folders and multibranch projects hold items. */
  children?: Map<string, SimItem>;
}

interface SimView {
  className: string;
  xml: string;
}

export interface LoggedRequest {
  method: string;
  path: string;
  status: number;
}

interface Failure {
  method: string;
  path: RegExp;
  status: number;
}

// XStream aliases: workflow-job registers `flow-definition` for WorkflowJob
// (org.jenkinsci.plugins.workflow.job.WorkflowJob, `Items.XSTREAM2.alias`), core registers
// `project` for FreeStyleProject (hudson.model.Items). Any other root element is the class name.
const ALIASES: Record<string, string> = {
  'flow-definition': 'org.jenkinsci.plugins.workflow.job.WorkflowJob',
  project: 'hudson.model.FreeStyleProject',
};

const FOLDER = 'com.cloudbees.hudson.plugins.folder.Folder';
const GROUP_CLASSES = new Set([
  FOLDER,
  'org.jenkinsci.plugins.workflow.multibranch.WorkflowMultiBranchProject',
]);

// hudson.util.XStream2.PluginClassOwnership writes `plugin="name@version"` on elements whose class
// comes from a plugin. The versions are those of a current Jenkins LTS installation.
const PLUGIN_OF: Record<string, string> = {
  'flow-definition': 'workflow-job@1436.vfa_244484591f',
  'org.jenkinsci.plugins.workflow.cps.CpsScmFlowDefinition': 'workflow-cps@3894.3896.vca_2c931e7935',
  'hudson.plugins.git.GitSCM': 'git@5.2.2',
  'jenkins.plugins.git.GitSCMSource': 'git@5.2.2',
  'org.jenkinsci.plugins.workflow.multibranch.WorkflowMultiBranchProject': 'workflow-multibranch@783.787.v50539468395f',
  'jenkins.branch.MultiBranchProjectViewHolder': 'branch-api@2.1152.v6f101e97dd77',
  'jenkins.branch.MultiBranchProject$BranchSourceList': 'branch-api@2.1152.v6f101e97dd77',
  'jenkins.branch.MetadataActionFolderIcon': 'branch-api@2.1152.v6f101e97dd77',
  'com.cloudbees.hudson.plugins.folder.computed.DefaultOrphanedItemStrategy': 'cloudbees-folder@6.901.vb_4c7a_da_75da_3',
  'com.cloudbees.hudson.plugins.folder.Folder': 'cloudbees-folder@6.901.vb_4c7a_da_75da_3',
  'com.cloudbees.hudson.plugins.folder.icons.StockFolderIcon': 'cloudbees-folder@6.901.vb_4c7a_da_75da_3',
};

export class JenkinsSimulator {
  readonly items = new Map<string, SimItem>();
  readonly views = new Map<string, SimView>();
  readonly log: LoggedRequest[] = [];
  private readonly sessions = new Map<string, string>();
  private readonly failures: Failure[] = [];
  private server: Server | undefined;
  url = '';

  constructor(readonly options: SimulatorOptions = {}) {
    // Jenkins always has the "all" view (hudson.model.AllView), which no one made with a file.
    this.views.set('all', { className: 'hudson.model.AllView', xml: '<hudson.model.AllView><name>all</name></hudson.model.AllView>' });
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  /** Requests that changed something (every POST), for "zero POSTs" checks. */
  posts(): LoggedRequest[] {
    return this.log.filter((r) => r.method === 'POST');
  }

  /** Makes requests matching `path` answer `status`, to test failures of single items. */
  failOn(method: string, path: RegExp, status: number): void {
    this.failures.push({ method, path, status });
  }

  /** An item as stored, by full name (`a/b`). */
  item(fullName: string): SimItem | undefined {
    const segments = fullName.split('/');
    let group = this.items;
    for (const [index, segment] of segments.entries()) {
      const found = entryOf(group, segment)?.[1];
      if (!found || index === segments.length - 1) return found;
      if (!found.children) return undefined;
      group = found.children;
    }
    return undefined;
  }

  /** Every item's full name, depth first. */
  fullNames(group = this.items, prefix = ''): string[] {
    return [...group].flatMap(([name, item]) => [`${prefix}${name}`, ...(item.children ? this.fullNames(item.children, `${prefix}${name}/`) : [])]);
  }

  /** Puts an item in place as a person would in the UI (no HTTP, no checks). */
  seed(fullName: string, xml: string): void {
    const segments = fullName.split('/');
    const name = segments.pop()!;
    const group = segments.length === 0 ? this.items : this.item(segments.join('/'))?.children;
    if (!group) throw new Error(`no folder ${segments.join('/')}`);
    const className = classOf(parse(xml));
    group.set(name, { className, xml: jenkinsXml(xml), ...(GROUP_CLASSES.has(className) ? { children: new Map() } : {}) });
  }

  /** A hand edit of a job's stored config, as the UI's "Save" would do. */
  editConfig(fullName: string, edit: (xml: string) => string): void {
    const item = this.item(fullName);
    if (!item) throw new Error(`no job ${fullName}`);
    item.xml = jenkinsXml(edit(item.xml));
  }

  /** The job names a view lists (ListView `jobNames/string`). */
  viewJobs(name: string): string[] | undefined {
    const view = this.views.get(name);
    if (!view) return undefined;
    return Array.from(parse(view.xml).getElementsByTagName('string')).map((e) => e.textContent ?? '');
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const body = await readBody(req);
    const reply = (status: number, text = '', headers: Record<string, string> = {}) => {
      this.log.push({ method: req.method ?? 'GET', path: url.pathname + url.search, status });
      res.writeHead(status, { 'content-type': 'text/plain;charset=utf-8', ...headers });
      res.end(text);
    };
    try {
      const answer = this.route(req, url, body);
      reply(answer.status, answer.body ?? '', answer.headers);
    } catch (error) {
      reply(500, `simulator failure: ${(error as Error).message}`);
    }
  }

  private route(req: IncomingMessage, url: URL, body: string): Answer {
    const method = req.method ?? 'GET';
    const authProblem = this.authenticate(req);
    if (authProblem) return authProblem;

    // The crumb issuer (hudson.security.csrf.DefaultCrumbIssuer, /crumbIssuer/api/json). Since
    // Jenkins 2.186 (SECURITY-626) a crumb is only valid with the web session it was issued to,
    // so the issuer starts a session (JSESSIONID cookie). With CSRF protection off there is no
    // crumb issuer and the URL is a 404. https://www.jenkins.io/doc/book/security/csrf-protection/
    if (url.pathname === '/crumbIssuer/api/json' && method === 'GET') {
      if (this.options.csrf !== 'strict') return { status: 404, body: 'Not Found' };
      const session = randomBytes(8).toString('hex');
      const crumb = randomBytes(16).toString('hex');
      this.sessions.set(session, crumb);
      return {
        status: 200,
        body: JSON.stringify({ _class: 'hudson.security.csrf.DefaultCrumbIssuer', crumb, crumbRequestField: 'Jenkins-Crumb' }),
        headers: { 'content-type': 'application/json;charset=utf-8', 'set-cookie': `JSESSIONID.sim=${session}; Path=/; HttpOnly` },
      };
    }

    // hudson.security.csrf.CrumbFilter: a POST without a valid crumb for its session is a 403
    // "No valid crumb was included in the request".
    if (method === 'POST' && this.options.csrf === 'strict' && !this.validCrumb(req)) {
      return { status: 403, body: 'No valid crumb was included in the request' };
    }

    const injected = this.failures.find((f) => f.method === method && f.path.test(url.pathname + url.search));
    if (injected) return { status: injected.status, body: `Injected failure ${injected.status}` };

    if (url.pathname === '/api/json' && method === 'GET') return this.apiJson(url.searchParams.get('tree'));
    if (url.pathname === '/createView' && method === 'POST') return this.createView(url.searchParams.get('name'), body);
    const view = /^\/view\/([^/]+)\/(config\.xml|doDelete)$/.exec(url.pathname);
    if (view) return this.viewAction(decodeURIComponent(view[1]!), view[2]!, method, body);

    // Items live at /job/a/job/b/...; an ItemGroup (Jenkins, a folder) has createItem.
    const match = /^((?:\/job\/[^/]+)*)\/(createItem|config\.xml|doDelete)$/.exec(url.pathname);
    if (!match) return { status: 404, body: 'Not Found' };
    const path = match[1]!.split('/job/').filter(Boolean).map(decodeURIComponent);
    const verb = match[2]!;
    if (verb === 'createItem' && method === 'POST') return this.createItem(path, url.searchParams.get('name'), body, req);
    const item = path.length > 0 ? this.item(path.join('/')) : undefined;
    // Stapler answers 404 for a URL segment that names no item.
    if (!item) return { status: 404, body: 'Not Found' };
    if (verb === 'config.xml' && method === 'GET') return { status: 200, body: item.xml, headers: { 'content-type': 'application/xml' } };
    if (verb === 'config.xml' && method === 'POST') return this.updateItem(item, body);
    if (verb === 'doDelete' && method === 'POST') {
      const group = this.groupOf(path)!;
      group.delete(entryOf(group, path[path.length - 1]!)![0]);
      // AbstractItem.doDoDelete redirects to the parent after deleting.
      return { status: 302, headers: { location: '/' } };
    }
    return { status: 405, body: 'Method Not Allowed' };
  }

  // Basic authentication with an API token (jenkins.security.BasicHeaderProcessor and
  // BasicHeaderApiTokenAuthenticator): wrong credentials are a 401; an anonymous request to a
  // Jenkins that lets only logged-in users read is a 403.
  // https://www.jenkins.io/doc/book/system-administration/authenticating-scripted-clients/
  private authenticate(req: IncomingMessage): Answer | undefined {
    if (!this.options.users) return undefined;
    const header = req.headers.authorization;
    if (!header) return { status: 403, body: 'Authentication required' };
    const [scheme, encoded = ''] = header.split(' ');
    const [user = '', token = ''] = Buffer.from(encoded, 'base64').toString('utf8').split(':');
    if (scheme !== 'Basic' || this.options.users[user] !== token) {
      return { status: 401, body: 'Invalid password/token for user', headers: { 'www-authenticate': 'Basic realm="Jenkins"' } };
    }
    return undefined;
  }

  private validCrumb(req: IncomingMessage): boolean {
    const session = /JSESSIONID\.sim=([0-9a-f]+)/.exec(req.headers.cookie ?? '')?.[1];
    const crumb = req.headers['jenkins-crumb'];
    return session !== undefined && crumb !== undefined && this.sessions.get(session) === crumb;
  }

  // The remote API (hudson.model.Api): `tree=` selects the properties to export, nested with
  // brackets (org.kohsuke.stapler.export.TreePruner). Jenkins exports `_class` for every object.
  // https://www.jenkins.io/doc/book/using/remote-access-api/
  private apiJson(tree: string | null): Answer {
    const root = {
      _class: 'hudson.model.Hudson',
      jobs: this.exportItems(this.items, ''),
      views: [...this.views].map(([name, view]) => ({ _class: view.className, name, description: descriptionOf(parse(view.xml)) })),
    };
    const pruned = tree ? prune(root, parseTree(tree)) : root;
    return { status: 200, body: JSON.stringify(pruned), headers: { 'content-type': 'application/json;charset=utf-8' } };
  }

  private exportItems(group: Map<string, SimItem>, prefix: string): object[] {
    return [...group].map(([name, item]) => ({
      _class: item.className,
      name,
      fullName: `${prefix}${name}`,
      description: descriptionOf(parse(item.xml)),
      ...(item.children ? { jobs: this.exportItems(item.children, `${prefix}${name}/`) } : {}),
    }));
  }

  private groupOf(path: string[]): Map<string, SimItem> | undefined {
    if (path.length <= 1) return this.items;
    return this.item(path.slice(0, -1).join('/'))?.children;
  }

  // ItemGroupMixIn.createTopLevelItem / createProjectFromXML: the name must pass
  // Jenkins.checkGoodName (no unsafe or control characters, not `.`/`..`, no trailing dot) and be
  // free in any case ("A job already exists with the name ..."), both answered
  // 400 (hudson.model.Failure); the body is the item's config.xml with Content-Type application/xml.
  // Only Jenkins itself and a plain Folder take createItem (ModifiableItemGroup); a multibranch
  // project computes its items and has no such URL.
  private createItem(folder: string[], name: string | null, body: string, req: IncomingMessage): Answer {
    const parent = folder.length === 0 ? undefined : this.item(folder.join('/'));
    const group = folder.length === 0 ? this.items : parent?.className === FOLDER ? parent.children : undefined;
    if (!group) return { status: 404, body: 'Not Found' };
    if (!name) return { status: 400, body: 'Query parameter "name" is required' };
    if (/[\\/:?*|<>[\]"%;@#$&!^\u0000-\u001f\u007f-\u009f]/.test(name) || ['.', '..', ''].includes(name.trim()) || name.trim().endsWith('.')) {
      return { status: 400, body: `"${name}" is an unsafe character`, headers: { 'x-error': `unsafe name ${name}` } };
    }
    if (entryOf(group, name)) {
      return { status: 400, body: `A job already exists with the name ‘${name}’`, headers: { 'x-error': `A job already exists with the name '${name}'` } };
    }
    if (!String(req.headers['content-type'] ?? '').includes('xml')) return { status: 400, body: 'Expected an XML body' };
    const className = classOf(parse(body));
    group.set(name, { className, xml: jenkinsXml(body), ...(GROUP_CLASSES.has(className) ? { children: new Map() } : {}) });
    return { status: 200 };
  }

  // AbstractItem.updateByXml: the new config must be of the item's own class, else
  // "Expecting class X but got class Y instead" (an IOException, answered 500).
  private updateItem(item: SimItem, body: string): Answer {
    const className = classOf(parse(body));
    if (className !== item.className) return { status: 500, body: `Expecting class ${item.className} but got class ${className} instead` };
    item.xml = jenkinsXml(body);
    return { status: 200 };
  }

  // Jenkins.doCreateView -> View.create: with an XML body the view is read from it
  // (View.createViewFromXML); an existing name is a 400 "A view already exists with the name".
  private createView(name: string | null, body: string): Answer {
    if (!name) return { status: 400, body: 'Query parameter "name" is required' };
    if (this.views.has(name)) return { status: 400, body: `A view already exists with the name "${name}"` };
    this.views.set(name, { className: classOf(parse(body)), xml: jenkinsXml(body) });
    return { status: 200 };
  }

  // View.doConfigDotXml (GET reads, POST replaces via View.updateByXml) and View.doDoDelete.
  private viewAction(name: string, verb: string, method: string, body: string): Answer {
    const view = this.views.get(name);
    if (!view) return { status: 404, body: 'Not Found' };
    if (verb === 'config.xml' && method === 'GET') return { status: 200, body: view.xml, headers: { 'content-type': 'application/xml' } };
    if (verb === 'config.xml' && method === 'POST') {
      view.xml = jenkinsXml(body);
      return { status: 200 };
    }
    if (verb === 'doDelete' && method === 'POST') {
      this.views.delete(name);
      return { status: 302, headers: { location: '/' } };
    }
    return { status: 405, body: 'Method Not Allowed' };
  }
}

interface Answer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

// Jenkins and folders hold their items in CopyOnWriteMap.Tree(String.CASE_INSENSITIVE_ORDER):
// `App` finds `app`, and createItem of `App` meets the existing `app`.
function entryOf<T>(group: Map<string, T>, name: string): [string, T] | undefined {
  const lower = name.toLowerCase();
  return [...group].find(([key]) => key.toLowerCase() === lower);
}

function parse(xml: string): Element {
  const document = new DOMParser({
    onError: (level, message) => {
      if (level !== 'warning') throw new Error(`malformed XML: ${message}`);
    },
  }).parseFromString(xml, 'text/xml');
  if (!document.documentElement) throw new Error('malformed XML: no root element');
  return document.documentElement;
}

function classOf(root: Element): string {
  return ALIASES[root.nodeName] ?? root.nodeName;
}

function descriptionOf(root: Element): string | null {
  const element = Array.from(root.childNodes).find((n): n is Element => n.nodeType === 1 && n.nodeName === 'description');
  return element?.textContent || null;
}

// The job properties a person saves in the UI are rebuilt in descriptor order
// (Job.doConfigSubmit), not in the order of the config that created the job: reordered here.
const REORDERED = new Set(['properties']);

/** A config as Jenkins' XStream writes it back (hudson.util.XStream2, XmlFile.write). */
export function jenkinsXml(xml: string): string {
  return `<?xml version='1.1' encoding='UTF-8'?>\n${writeElement(parse(xml), '')}`;
}

function writeElement(element: Element, indent: string): string {
  const attributes = Array.from(element.attributes).map((a) => ` ${a.name}="${escape(a.value)}"`);
  const plugin = PLUGIN_OF[element.getAttribute('class') ?? ''] ?? PLUGIN_OF[element.nodeName];
  if (plugin && !element.hasAttribute('plugin')) attributes.push(` plugin="${plugin}"`);
  const open = `${indent}<${element.nodeName}${attributes.join('')}`;
  let children = Array.from(element.childNodes).filter((n): n is Element => n.nodeType === 1);
  if (REORDERED.has(element.nodeName)) children = [...children].sort((a, b) => b.nodeName.localeCompare(a.nodeName));
  // ListView.jobNames is a TreeSet<String> with CaseInsensitiveComparator (String.compareToIgnoreCase):
  // XStream writes its comparator, then the names in that order.
  if (element.nodeName === 'jobNames') {
    const text = (e: Element) => e.textContent ?? '';
    children = [...children].sort((a, b) => Number(a.nodeName === 'string') - Number(b.nodeName === 'string') || javaCompareIgnoreCase(text(a), text(b)));
  }
  if (children.length > 0) {
    return `${open}>\n${children.map((c) => writeElement(c, `${indent}  `)).join('')}${indent}</${element.nodeName}>\n`;
  }
  const text = Array.from(element.childNodes as ArrayLike<Node>).map((n) => (n.nodeType === 3 || n.nodeType === 4 ? n.nodeValue ?? '' : '')).join('');
  return text === '' ? `${open}/>\n` : `${open}>${escape(text)}</${element.nodeName}>\n`;
}

/** java.lang.String.compareToIgnoreCase: char by char, upper case then lower case, no locale. */
function javaCompareIgnoreCase(a: string, b: string): number {
  const fold = (c: string) => {
    const upper = c.toUpperCase();
    const lower = (upper.length === 1 ? upper : c).toLowerCase();
    return (lower.length === 1 ? lower : c).charCodeAt(0);
  };
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i] && fold(a[i]!) !== fold(b[i]!)) return fold(a[i]!) - fold(b[i]!);
  }
  return a.length - b.length;
}

// XStream's PrettyPrintWriter escapes these five characters (and writes &apos; and &quot; in text).
function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

type TreeSpec = Map<string, TreeSpec | null>;

/** `jobs[name,jobs[name]],views[name]` -> nested field selection. */
export function parseTree(tree: string): TreeSpec {
  let at = 0;
  const read = (): TreeSpec => {
    const spec: TreeSpec = new Map();
    while (at < tree.length) {
      const name = /^[A-Za-z_][\w]*/.exec(tree.slice(at))?.[0];
      if (!name) throw new Error(`bad tree at ${at}: ${tree}`);
      at += name.length;
      if (tree[at] === '[') {
        at++;
        spec.set(name, read());
        if (tree[at] !== ']') throw new Error(`unclosed [ in tree: ${tree}`);
        at++;
      } else spec.set(name, null);
      if (tree[at] === ',') at++;
      else break;
    }
    return spec;
  };
  return read();
}

function prune(value: unknown, spec: TreeSpec): unknown {
  if (Array.isArray(value)) return value.map((v) => prune(v, spec));
  if (typeof value !== 'object' || value === null) return value;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = { _class: source._class };
  for (const [key, sub] of spec) if (key in source) out[key] = sub ? prune(source[key], sub) : source[key];
  return out;
}
