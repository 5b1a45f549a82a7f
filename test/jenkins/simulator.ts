// A Jenkins simulator for tests: a real HTTP server on 127.0.0.1 (port 0) that speaks the part of
// Jenkins' HTTP API that `repoadmin jobs` uses, as Jenkins does it. Each behaviour cites the
// Jenkins documentation or source it follows (jenkinsci/jenkins core, and the plugins named). It
// parses and re-serialises configs with @xmldom/xmldom (not the production XML code), as XStream
// would: `plugin="..."` attributes, `<?xml version='1.1' ...?>`, two-space indentation, and job
// properties in its own order.
//
// Two releases of core behave differently where it matters (`release`):
// - `older` (before 2.568 and 2.555.3): `GET config.xml` copies the stored file, which is the
//   body of the last createItem or update (AbstractItem.writeConfigDotXml, IOUtils.copy).
// - `current` (2.568 and 2.555.3 on, SECURITY-3744, core commit 037c2c30cd): `GET config.xml`
//   re-serialises the live object (Items.XSTREAM2.toXMLUTF8): fields in declaration order, fields
//   with defaults written out, unknown to the sent config or not, and secrets encrypted
//   (hudson.util.Secret); updateByXml stores that re-serialised form too.
// Both: update bodies are read as text in the request's charset, ISO-8859-1 when none is given;
// createItem reads bytes and honours the XML declaration.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DOMParser, type Document, type Element, type Node } from '@xmldom/xmldom';

export interface SimulatorOptions {
  /**
   * `strict`: a crumb bound to the session is required on every POST, as for password logins and
   * Jenkins before 2.96; `off`: no CSRF protection, the crumb issuer answers 404.
   */
  csrf?: 'strict' | 'off';
  /** User -> API token. Without users, anyone may do anything (security disabled). */
  users?: Record<string, string>;
  /** Which core behaviour to copy (see the top of this file); default `current`. */
  release?: JenkinsRelease;
  /** Answer every request with a redirect to this address plus the path (http to https, a context path). */
  redirectTo?: string;
  /**
   * The header the crumb travels in. Jenkins takes it from the crumb issuer's descriptor
   * (hudson.security.csrf.CrumbIssuerDescriptor.getCrumbRequestField): `Jenkins-Crumb`
   * (CrumbIssuer.DEFAULT_CRUMB_NAME) unless the system property `hudson.security.csrf.requestfield`
   * names another, as DefaultCrumbIssuer.DescriptorImpl reads it; Jenkins 1.x used `.crumb`.
   */
  crumbRequestField?: string;
}

export type JenkinsRelease = 'older' | 'current';
export const JENKINS_RELEASES: readonly JenkinsRelease[] = ['older', 'current'];

interface SimItem {
  className: string;
  /** As Jenkins holds it: the stored file (older) or the live object re-serialised, secrets in clear (current). */
  xml: string;
  /** Builds started through the remote trigger or the build button. */
  builds?: number;
  /** A build in progress: when it stops once interrupted (Date.now() ms), or never. */
  running?: { stopsAt: number };
  /** A delete is under way (jenkins.model.queue.ItemDeletion). */
  deleting?: boolean;
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
  headers?: Record<string, string>;
  /** How many more requests it answers; undefined: all. */
  times?: number;
  body?: string;
}

// XStream aliases: workflow-job registers `flow-definition` for WorkflowJob
// (org.jenkinsci.plugins.workflow.job.WorkflowJob, `Items.XSTREAM2.alias`), core registers
// `project` for FreeStyleProject (hudson.model.Items). Any other root element is the class name.
const ALIASES: Record<string, string> = {
  'flow-definition': 'org.jenkinsci.plugins.workflow.job.WorkflowJob',
  project: 'hudson.model.FreeStyleProject',
};

const FOLDER = 'com.cloudbees.hudson.plugins.folder.Folder';

// The word Messages.AbstractItem_BeingDeleted puts in "{0} is currently being deleted":
// AbstractItem.getPronoun, for a job core's Job pronoun unless an AlternativeUiTextProvider of a
// plugin gives another. It names the kind of item, never the item.
const DELETING_PRONOUN = 'Project';
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
  'com.cloudbees.hudson.plugins.folder.health.WorstChildHealthMetric': 'cloudbees-folder@6.901.vb_4c7a_da_75da_3',
  'org.jenkinsci.plugins.pipeline.modeldefinition.actions.DeclarativeJobAction': 'pipeline-model-definition@2.2218.v56d0cda_37c72',
  'org.jenkinsci.plugins.pipeline.modeldefinition.actions.DeclarativeJobPropertyTrackerAction': 'pipeline-model-definition@2.2218.v56d0cda_37c72',
  'org.jenkinsci.plugins.workflow.multibranch.JobPropertyTrackerAction': 'workflow-multibranch@783.787.v50539468395f',
  'org.jenkinsci.plugins.workflow.job.properties.PipelineTriggersJobProperty': 'workflow-job@1436.vfa_244484591f',
};

export class JenkinsSimulator {
  readonly items = new Map<string, SimItem>();
  readonly views = new Map<string, SimView>();
  readonly log: LoggedRequest[] = [];
  private readonly sessions = new Map<string, string>();
  private readonly failures: Failure[] = [];
  private server: Server | undefined;
  // The instance's key of hudson.util.Secret (jenkins.security.CryptoConfidentialKey: AES, 128 bits).
  private readonly secretKey = randomBytes(16);
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
  failOn(method: string, path: RegExp, status: number, options: { headers?: Record<string, string>; times?: number; body?: string } = {}): void {
    this.failures.push({ method, path, status, headers: options.headers, times: options.times, body: options.body });
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

  get crumbField(): string {
    return this.options.crumbRequestField ?? 'Jenkins-Crumb';
  }

  get release(): JenkinsRelease {
    return this.options.release ?? 'current';
  }

  /** Puts an item in place as a person would in the UI (no HTTP, no checks). */
  seed(fullName: string, xml: string): void {
    const segments = fullName.split('/');
    const name = segments.pop()!;
    const group = segments.length === 0 ? this.items : this.item(segments.join('/'))?.children;
    if (!group) throw new Error(`no folder ${segments.join('/')}`);
    const className = classOf(parse(xml));
    group.set(name, { className, xml: this.held(xml), ...(GROUP_CLASSES.has(className) ? { children: new Map() } : {}) });
  }

  /** A hand edit of a job's stored config, as the UI's "Save" would do. */
  editConfig(fullName: string, edit: (xml: string) => string): void {
    const item = this.item(fullName);
    if (!item) throw new Error(`no job ${fullName}`);
    item.xml = this.held(edit(item.xml));
  }

  /** How many builds of a job were started. */
  builds(fullName: string): number {
    return this.item(fullName)?.builds ?? 0;
  }

  /** A config as Jenkins holds it after reading it, secrets in clear. */
  private held(xml: string): string {
    if (this.release === 'older') return jenkinsXml(xml);
    // BuildAuthorizationToken.ConverterImpl.fromString: a value that decrypts is the secret it
    // encrypts (a config read from Jenkins and sent back); anything else is the token itself.
    const root = parse(xml);
    const token = childElement(root, 'authToken');
    if (token) token.textContent = this.decrypt(token.textContent ?? '') ?? token.textContent;
    return reserialize(root);
  }

  /** A config as `GET config.xml` answers it. */
  private served(item: SimItem): string {
    if (this.release === 'older') return item.xml;
    // hudson.util.Secret.getEncryptedValue, through BuildAuthorizationToken.ConverterImpl.toString.
    // Secret draws an IV once per object, so Jenkins writes a new ciphertext whenever the token is
    // read from plain text again (every update); here every read draws one, which is the harsher
    // case of the two: a client comparing ciphertexts fails at once instead of after an update.
    const root = parse(item.xml);
    const token = childElement(root, 'authToken');
    if (token) token.textContent = this.encrypt(token.textContent ?? '');
    return `<?xml version='1.1' encoding='UTF-8'?>\n${writeElement(root, '')}`;
  }

  // Secret.getEncryptedValue: `{` + base64 of [1, IV length (4 bytes), data length (4 bytes), IV,
  // AES/CBC/PKCS5Padding of the UTF-8 text] + `}`; Secret.decrypt reads it back.
  encrypt(plain: string): string {
    const iv = randomBytes(16);
    const cipher = createCipheriv('aes-128-cbc', this.secretKey, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const lengths = Buffer.alloc(8);
    lengths.writeUInt32BE(iv.length, 0);
    lengths.writeUInt32BE(data.length, 4);
    return `{${Buffer.concat([Buffer.from([1]), lengths, iv, data]).toString('base64')}}`;
  }

  decrypt(value: string): string | undefined {
    const match = /^\{([A-Za-z0-9+/]+={0,2})\}$/.exec(value);
    if (!match) return undefined;
    const payload = Buffer.from(match[1]!, 'base64');
    if (payload[0] !== 1 || payload.length < 9) return undefined;
    const ivLength = payload.readUInt32BE(1);
    const dataLength = payload.readUInt32BE(5);
    if (payload.length !== 9 + ivLength + dataLength) return undefined;
    try {
      const decipher = createDecipheriv('aes-128-cbc', this.secretKey, payload.subarray(9, 9 + ivLength));
      return Buffer.concat([decipher.update(payload.subarray(9 + ivLength)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }

  /**
   * A build of a Declarative Jenkinsfile that declares `parameters`, `triggers` or `options`:
   * what pipeline-model-definition's Utils.updateJobProperties (src/main/groovy/org/jenkinsci/
   * plugins/pipeline/modeldefinition/Utils.groovy) saves on the job. The tracker action of the
   * previous build says what the Jenkinsfile defined before: those are replaced, everything else
   * on the job is kept. Triggers are kept one per class (getTriggersToApply, a TreeSet by
   * descriptor id), the Jenkinsfile's winning; parameters are merged by name; other properties
   * one per class; `options { quietPeriod(n) }` sets the job's quietPeriod. Then the job gets a
   * DeclarativeJobAction and a new DeclarativeJobPropertyTrackerAction (fields jobProperties,
   * triggers, parameters, options: sets of descriptor ids and names).
   */
  declarativeBuild(fullName: string, declared: DeclaredProperties): void {
    const item = this.buildable(fullName);
    const root = parse(item.xml);
    const document = root.ownerDocument!;
    const actions = ensureChild(root, 'actions', 0);
    const tracker = childElement(actions, DECLARATIVE_TRACKER);
    const previous = (field: string) => new Set(tracker ? stringsOf(childElement(tracker, field)) : []);
    const [prevProperties, prevTriggers, prevParameters] = [previous('jobProperties'), previous('triggers'), previous('parameters')];
    const properties = ensureChild(root, 'properties', 3);

    const newTriggers = (declared.triggers ?? []).map((t) => element(document, t.className, [['spec', t.spec]]));
    const triggerProperty = childElement(properties, TRIGGERS_PROPERTY);
    const existingTriggers = elementsOf(triggerProperty ? childElement(triggerProperty, 'triggers') : undefined);
    const byClass = new Map(existingTriggers.filter((t) => !prevTriggers.has(t.nodeName)).map((t) => [t.nodeName, t]));
    for (const trigger of newTriggers) byClass.set(trigger.nodeName, trigger);
    if (triggerProperty) properties.removeChild(triggerProperty);
    if (byClass.size > 0) {
      const list = document.createElement('triggers');
      for (const className of [...byClass.keys()].sort()) list.appendChild(byClass.get(className)!);
      properties.appendChild(wrap(document, TRIGGERS_PROPERTY, list));
    }

    const parameterProperty = childElement(properties, PARAMETERS_PROPERTY);
    const existingParameters = elementsOf(parameterProperty ? childElement(parameterProperty, 'parameterDefinitions') : undefined);
    const declaredNames = new Set((declared.parameters ?? []).map((p) => p.name));
    const keptParameters = existingParameters.filter((p) => {
      const name = childElement(p, 'name')?.textContent ?? '';
      return !declaredNames.has(name) && !prevParameters.has(name);
    });
    if (parameterProperty) properties.removeChild(parameterProperty);
    const parameters = [...(declared.parameters ?? []).map((p) => stringParameter(document, p)), ...keptParameters];
    if (parameters.length > 0) {
      const list = document.createElement('parameterDefinitions');
      for (const parameter of parameters) list.appendChild(parameter);
      properties.appendChild(wrap(document, PARAMETERS_PROPERTY, list));
    }

    const newProperties = (declared.properties ?? []).map((xml) => document.importNode(parse(xml), true) as Element);
    const newClasses = new Set(newProperties.map((p) => p.nodeName));
    for (const property of elementsOf(properties)) {
      if (property.nodeName === TRIGGERS_PROPERTY || property.nodeName === PARAMETERS_PROPERTY) continue;
      if (prevProperties.has(property.nodeName) || newClasses.has(property.nodeName)) properties.removeChild(property);
    }
    for (const property of newProperties) properties.appendChild(property);

    if (declared.quietPeriod !== undefined) {
      const quiet = childElement(root, 'quietPeriod') ?? root.appendChild(document.createElement('quietPeriod'));
      quiet.textContent = String(declared.quietPeriod);
    }

    if (!childElement(actions, DECLARATIVE_ACTION)) actions.appendChild(document.createElement(DECLARATIVE_ACTION));
    if (tracker) actions.removeChild(tracker);
    actions.appendChild(
      element(document, DECLARATIVE_TRACKER, [
        ['jobProperties', newProperties.map((p) => p.nodeName)],
        ['triggers', newTriggers.map((t) => t.nodeName)],
        ['parameters', [...declaredNames]],
        ['options', declared.quietPeriod !== undefined ? ['quietPeriod'] : []],
      ]),
    );
    this.saved(item, root);
  }

  /**
   * A build of a scripted Jenkinsfile calling `properties([...])`: workflow-multibranch's
   * JobPropertyStep.Execution.run. With a JobPropertyTrackerAction from an earlier run, only the
   * properties it names are removed; without one (and no earlier run of the step) none are. The
   * step's properties are then added (Job.addProperty) and the tracker replaced, naming them by
   * descriptor id.
   */
  scriptedPropertiesBuild(fullName: string, propertyXml: string[]): void {
    const item = this.buildable(fullName);
    const root = parse(item.xml);
    const document = root.ownerDocument!;
    const actions = ensureChild(root, 'actions', 0);
    const tracker = childElement(actions, SCRIPTED_TRACKER);
    const previous = new Set(tracker ? stringsOf(childElement(tracker, 'jobPropertyDescriptors')) : []);
    const properties = ensureChild(root, 'properties', 3);
    for (const property of elementsOf(properties)) if (previous.has(property.nodeName)) properties.removeChild(property);
    const added = propertyXml.map((xml) => document.importNode(parse(xml), true) as Element);
    for (const property of added) properties.appendChild(property);
    if (tracker) actions.removeChild(tracker);
    actions.appendChild(element(document, SCRIPTED_TRACKER, [['jobPropertyDescriptors', added.map((p) => p.nodeName)]]));
    this.saved(item, root);
  }

  /** A pipeline job that can build; anything else is a mistake in the test. */
  private buildable(fullName: string): SimItem {
    const item = this.item(fullName);
    if (!item || item.className !== 'org.jenkinsci.plugins.workflow.job.WorkflowJob') throw new Error(`no pipeline job ${fullName}`);
    return item;
  }

  /**
   * A job saved by Jenkins itself (Job.save, XmlFile.write): on every release the stored file is
   * then XStream's form of the live object, not the text a client sent.
   */
  private saved(item: SimItem, root: Element): void {
    item.xml = reserialize(root);
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
      const answer = await this.route(req, url, body);
      reply(answer.status, answer.body ?? '', answer.headers);
    } catch (error) {
      reply(500, `simulator failure: ${(error as Error).message}`);
    }
  }

  private route(req: IncomingMessage, url: URL, body: Buffer): Answer | Promise<Answer> {
    const method = req.method ?? 'GET';
    // A proxy sending http to https, or a Jenkins at a context path (--prefix=/jenkins) reached
    // without it: a redirect to the same path at the other address.
    if (this.options.redirectTo) {
      return { status: 302, headers: { location: `${this.options.redirectTo.replace(/\/+$/, '')}${url.pathname}${url.search}` } };
    }
    const authProblem = this.authenticate(req);
    if (authProblem) return authProblem;

    const injected = this.failures.find((f) => f.method === method && f.path.test(url.pathname + url.search) && f.times !== 0);
    if (injected) {
      if (injected.times !== undefined) injected.times--;
      return { status: injected.status, body: injected.body ?? `Injected failure ${injected.status}`, headers: injected.headers };
    }

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
        body: JSON.stringify({ _class: 'hudson.security.csrf.DefaultCrumbIssuer', crumb, crumbRequestField: this.crumbField }),
        headers: { 'content-type': 'application/json;charset=utf-8', 'set-cookie': `JSESSIONID.sim=${session}; Path=/; HttpOnly` },
      };
    }

    // hudson.security.csrf.CrumbFilter: a POST without a valid crumb for its session is a 403
    // "No valid crumb was included in the request".
    if (method === 'POST' && this.options.csrf === 'strict' && !this.validCrumb(req)) {
      return { status: 403, body: 'No valid crumb was included in the request' };
    }

    if (url.pathname === '/api/json' && method === 'GET') return this.apiJson(url.searchParams.get('tree'));
    // View.create -> View.createViewFromXML reads the request's bytes, as createItem does.
    if (url.pathname === '/createView' && method === 'POST') return this.createView(url.searchParams.get('name'), declaredText(body));
    const view = /^\/view\/([^/]+)\/(config\.xml|doDelete)$/.exec(url.pathname);
    if (view) return this.viewAction(decodeURIComponent(view[1]!), view[2]!, method, requestText(req, body));

    // Items live at /job/a/job/b/...; an ItemGroup (Jenkins, a folder) has createItem.
    const match = /^((?:\/job\/[^/]+)*)\/(createItem|config\.xml|doDelete|build)$/.exec(url.pathname);
    if (!match) return { status: 404, body: 'Not Found' };
    const path = match[1]!.split('/job/').filter(Boolean).map(decodeURIComponent);
    const verb = match[2]!;
    if (verb === 'createItem' && method === 'POST') return this.createItem(path, url.searchParams.get('name'), declaredText(body), req);
    const item = path.length > 0 ? this.item(path.join('/')) : undefined;
    // Stapler answers 404 for a URL segment that names no item.
    if (!item) return { status: 404, body: 'Not Found' };
    if (verb === 'config.xml' && method === 'GET') return { status: 200, body: this.served(item), headers: { 'content-type': 'application/xml' } };
    // AbstractItem.doConfigDotXml: updateByXml(new StreamSource(req.getReader())).
    if (verb === 'config.xml' && method === 'POST') return this.updateItem(item, requestText(req, body));
    if (verb === 'build') return this.build(item, url.searchParams.get('token'), method);
    if (verb === 'doDelete' && method === 'POST') return this.deleteItem(path, item);
    return { status: 405, body: 'Method Not Allowed' };
  }

  /**
   * A build of the job is running, and stops `stopsAfterMs` after it is interrupted (never when
   * undefined), as a build that cleans up, or ignores the interrupt, does.
   */
  startRunningBuild(fullName: string, stopsAfterMs?: number): void {
    const item = this.item(fullName);
    if (!item) throw new Error(`no job ${fullName}`);
    item.builds = (item.builds ?? 0) + 1;
    item.running = { stopsAt: stopsAfterMs === undefined ? Number.POSITIVE_INFINITY : stopsAfterMs };
  }

  // AbstractItem.doDoDelete -> delete(): a second delete while one is under way is refused
  // (ItemDeletion.register, Failure Messages.AbstractItem_BeingDeleted, 400), the message naming
  // the item's pronoun, not the item (DELETING_PRONOUN). Running builds are
  // interrupted and waited for, up to 15 s (`expiration = System.nanoTime() + 15 s`); builds still
  // running then fail the delete (Failure AbstractItem_FailureToStopBuilds, 400) and the item
  // stays. Otherwise the item and its folder go (performDelete), then getParent().onDeleted and
  // ItemListener.fireOnDeleted, where ListView.Listener.onDeleted takes the item's name out of
  // every list view (hudson.model.ListView). doDoDelete redirects to the parent's page
  // (`rsp.sendRedirect2(req.getContextPath() + '/' + getParent().getUrl())`).
  private async deleteItem(path: string[], item: SimItem): Promise<Answer> {
    if (item.deleting) return { status: 400, body: `${DELETING_PRONOUN} is currently being deleted` };
    if (item.running) {
      item.deleting = true;
      const waited = Math.min(item.running.stopsAt, STOP_BUILDS_WAIT_MS);
      await new Promise((resolve) => setTimeout(resolve, waited));
      item.deleting = false;
      if (item.running.stopsAt > STOP_BUILDS_WAIT_MS) return { status: 400, body: `Failed to stop 1 build(s) of ${path.join('/')}` };
      item.running = undefined;
    }
    const group = this.groupOf(path)!;
    group.delete(entryOf(group, path[path.length - 1]!)![0]);
    const fullName = path.join('/');
    const gone = [fullName, ...(item.children ? this.fullNames(item.children, `${fullName}/`) : [])];
    for (const view of this.views.values()) {
      if (view.className !== 'hudson.model.ListView') continue;
      const root = parse(view.xml);
      const names = Array.from(root.getElementsByTagName('jobNames'))[0];
      const listed = elementsOf(names).filter((e) => e.nodeName === 'string' && gone.some((n) => javaCompareIgnoreCase(n, e.textContent ?? '') === 0));
      if (listed.length === 0) continue;
      for (const entry of listed) names!.removeChild(entry);
      view.xml = jenkinsXml(root.toString());
    }
    const parent = path.slice(0, -1).map((segment) => `job/${encodeURIComponent(segment)}/`).join('');
    return { status: 302, headers: { location: `${this.url}/${parent}` } };
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
    // CrumbFilter reads the header the issuer names (crumbIssuer.getCrumbRequestField()).
    const crumb = req.headers[this.crumbField.toLowerCase()];
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
  // ParameterizedJobMixIn.doBuild -> BuildAuthorizationToken.checkPermission: a `token` that
  // matches the job's authToken starts a build, by GET too; a token that does not is refused
  // (AccessDeniedException, 403); without a token the user needs Item.BUILD and a POST (405 for
  // a GET). A started build is a queue item: 201 Created with its address.
  private build(item: SimItem, token: string | null, method: string): Answer {
    const wanted = childElement(parse(item.xml), 'authToken')?.textContent ?? undefined;
    if (token !== null) {
      if (wanted === undefined || token !== wanted) return { status: 403, body: 'Invalid token provided' };
    } else if (method !== 'POST') {
      return { status: 405, body: 'Method Not Allowed', headers: { allow: 'POST' } };
    }
    item.builds = (item.builds ?? 0) + 1;
    return { status: 201, headers: { location: `${this.url}/queue/item/${item.builds}/` } };
  }

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
    group.set(name, { className, xml: this.held(body), ...(GROUP_CLASSES.has(className) ? { children: new Map() } : {}) });
    return { status: 200 };
  }

  // AbstractItem.updateByXml: the new config must be of the item's own class, else
  // "Expecting class X but got class Y instead" (an IOException, answered 500).
  private updateItem(item: SimItem, body: string): Answer {
    const className = classOf(parse(body));
    if (className !== item.className) return { status: 500, body: `Expecting class ${item.className} but got class ${className} instead` };
    item.xml = this.held(body);
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

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * A body read as text (`req.getReader()`): in the charset of its Content-Type, else ISO-8859-1,
 * the default of the Servlet specification that Jetty applies (Request.getCharacterEncoding).
 * Jenkins' hudson.util.CharacterEncodingFilter sets UTF-8 on POSTs without a charset but skips
 * `application/xml` and `text/xml` ones, so config.xml updates keep the default. The XML
 * declaration is not read.
 */
function requestText(req: IncomingMessage, body: Buffer): string {
  const charset = /;\s*charset="?([^";\s]+)/i.exec(String(req.headers['content-type'] ?? ''))?.[1];
  return decode(body, charset ?? 'ISO-8859-1');
}

/**
 * A body read as bytes by an XML parser (createItem: XMLUtils.safeTransform of
 * `req.getInputStream()`): the declaration's encoding, else UTF-8 (XML 1.0, 4.3.3).
 */
function declaredText(body: Buffer): string {
  const declared = /^<\?xml[^?]*\bencoding\s*=\s*["']([^"']+)["']/.exec(body.subarray(0, 200).toString('latin1'))?.[1];
  return decode(body, declared ?? 'UTF-8');
}

// Java's ISO-8859-1 maps every byte to the same code point; the WHATWG label of that name
// (TextDecoder) means windows-1252, so it is decoded here as Node's latin1.
function decode(body: Buffer, charset: string): string {
  return /^(iso-?8859-1|latin-?1)$/i.test(charset) ? body.toString('latin1') : new TextDecoder(charset).decode(body);
}

export interface DeclaredProperties {
  /** `parameters { string(name: ..., defaultValue: ...) }`. */
  parameters?: { name: string; defaultValue: string }[];
  /** `triggers { cron(...) }` (hudson.triggers.TimerTrigger) or `pollSCM(...)` (SCMTrigger). */
  triggers?: { className: string; spec: string }[];
  /** `options { quietPeriod(n) }`. */
  quietPeriod?: number;
  /** Other `options` that are job properties, as XML (e.g. DisableConcurrentBuildsJobProperty). */
  properties?: string[];
}

/** How long AbstractItem.delete waits for interrupted builds to stop. */
export const STOP_BUILDS_WAIT_MS = 15_000;

const TRIGGERS_PROPERTY = 'org.jenkinsci.plugins.workflow.job.properties.PipelineTriggersJobProperty';
const PARAMETERS_PROPERTY = 'hudson.model.ParametersDefinitionProperty';
const DECLARATIVE_ACTION = 'org.jenkinsci.plugins.pipeline.modeldefinition.actions.DeclarativeJobAction';
const DECLARATIVE_TRACKER = 'org.jenkinsci.plugins.pipeline.modeldefinition.actions.DeclarativeJobPropertyTrackerAction';
const SCRIPTED_TRACKER = 'org.jenkinsci.plugins.workflow.multibranch.JobPropertyTrackerAction';

function elementsOf(parent: Element | undefined): Element[] {
  return parent ? Array.from(parent.childNodes).filter((n): n is Element => n.nodeType === 1) : [];
}

function stringsOf(parent: Element | undefined): string[] {
  return elementsOf(parent).filter((e) => e.nodeName === 'string').map((e) => e.textContent ?? '');
}

/** The child of that name, made at `position` among the element children when missing. */
function ensureChild(root: Element, name: string, position: number): Element {
  const found = childElement(root, name);
  if (found) return found;
  const made = root.ownerDocument!.createElement(name);
  root.insertBefore(made, elementsOf(root)[position] ?? null);
  return made;
}

function wrap(document: Document, name: string, inner: Element): Element {
  const outer = document.createElement(name);
  outer.appendChild(inner);
  return outer;
}

/** `<name><field>text</field>...</name>`; a list field is a set of `<string>` (XStream's HashSet). */
function element(document: Document, name: string, fields: [string, string | string[]][]): Element {
  const made = document.createElement(name);
  for (const [field, value] of fields) {
    const child = document.createElement(field);
    if (Array.isArray(value)) {
      for (const text of [...value].sort()) child.appendChild(element(document, 'string', [])).appendChild(document.createTextNode(text));
    } else child.appendChild(document.createTextNode(value));
    made.appendChild(child);
  }
  return made;
}

// hudson.model.StringParameterDefinition: name and description (ParameterDefinition), then
// defaultValue and trim.
function stringParameter(document: Document, parameter: { name: string; defaultValue: string }): Element {
  return element(document, 'hudson.model.StringParameterDefinition', [['name', parameter.name], ['defaultValue', parameter.defaultValue], ['trim', 'false']]);
}

function childElement(root: Element, name: string): Element | undefined {
  return Array.from(root.childNodes).find((n): n is Element => n.nodeType === 1 && n.nodeName === name);
}

// Jenkins and folders hold their items in CopyOnWriteMap.Tree(String.CASE_INSENSITIVE_ORDER):
// `App` finds `app`, and createItem of `App` meets the existing `app`; that order compares char by
// char, so `ıdea` is `idea` too (both chars upper-case to `I`).
function entryOf<T>(group: Map<string, T>, name: string): [string, T] | undefined {
  return [...group].find(([key]) => javaCompareIgnoreCase(key, name) === 0);
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
  return childElement(root, 'description')?.textContent || null;
}

interface Field {
  name: string;
  /** The value XStream writes when the field holds its default (primitive fields). */
  default?: string;
  /** A Java `int` (a failed conversion leaves 0) or `Integer` (leaves null: the field is not written). */
  type?: 'int' | 'Integer';
}

// The persisted (non-transient) fields of the classes `repoadmin jobs` writes, in the order
// XStream writes them: superclass fields first, each class in declaration order. A field with a
// default is written even when the config that was sent left it out.
const FIELDS: Record<string, Field[]> = {
  // hudson.model.Actionable, AbstractItem, Job (core); WorkflowJob (workflow-job plugin,
  // src/main/java/org/jenkinsci/plugins/workflow/job/WorkflowJob.java).
  'org.jenkinsci.plugins.workflow.job.WorkflowJob': [
    { name: 'actions' }, { name: 'displayName' }, { name: 'description' }, { name: 'keepDependencies', default: 'false' },
    { name: 'properties' }, { name: 'definition' }, { name: 'triggers' }, { name: 'quietPeriod', type: 'Integer' }, { name: 'authToken' },
    { name: 'concurrentBuild' }, { name: 'disabled', default: 'false' },
  ],
  // workflow-cps plugin, plugin/src/main/java/org/jenkinsci/plugins/workflow/cps/CpsScmFlowDefinition.java.
  'org.jenkinsci.plugins.workflow.cps.CpsScmFlowDefinition': [{ name: 'scm' }, { name: 'scriptPath' }, { name: 'lightweight', default: 'false' }],
  // git plugin, src/main/java/hudson/plugins/git/GitSCM.java.
  'hudson.plugins.git.GitSCM': [
    { name: 'configVersion' }, { name: 'userRemoteConfigs' }, { name: 'branches' }, { name: 'doGenerateSubmoduleConfigurations', default: 'false' },
    { name: 'gitTool' }, { name: 'browser' }, { name: 'submoduleCfg' }, { name: 'extensions' },
  ],
  // core, src/main/java/hudson/tasks/LogRotator.java: removeLastBuild since 2.474.
  'hudson.tasks.LogRotator': [
    { name: 'daysToKeep', default: '-1', type: 'int' }, { name: 'numToKeep', default: '-1', type: 'int' }, { name: 'artifactDaysToKeep', type: 'Integer' },
    { name: 'artifactNumToKeep', type: 'Integer' }, { name: 'removeLastBuild', default: 'false' },
  ],
  // core, hudson/triggers/Trigger.java and SCMTrigger.java.
  'hudson.triggers.SCMTrigger': [{ name: 'spec' }, { name: 'ignorePostCommitHooks', default: 'false' }],
  // cloudbees-folder plugin, .../folder/computed/DefaultOrphanedItemStrategy.java.
  'com.cloudbees.hudson.plugins.folder.computed.DefaultOrphanedItemStrategy': [
    { name: 'pruneDeadBranches', default: 'false' }, { name: 'daysToKeep', default: '-1', type: 'int' }, { name: 'numToKeep', default: '-1', type: 'int' },
    { name: 'abortBuilds', default: 'false' },
  ],
  // cloudbees-folder plugin, .../folder/health/WorstChildHealthMetric.java.
  'com.cloudbees.hudson.plugins.folder.health.WorstChildHealthMetric': [{ name: 'nonRecursive', default: 'false' }],
};

/**
 * XStream's IntConverter.fromString (com.thoughtworks.xstream.converters.basic): Long.decode, then
 * anything from Integer.MIN_VALUE to 0xFFFFFFFF is cast to int, so 2^31..2^32-1 wrap to negative
 * numbers; beyond that (or beyond a long) a NumberFormatException, which Jenkins'
 * RobustReflectionConverter logs and skips, leaving the field as the object was allocated: 0 for
 * an int, null for an Integer. Jenkins answers 200 either way.
 */
export function xstreamInt(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^[-+]?(0x[0-9a-f]+|#[0-9a-f]+|\d+)$/i.test(trimmed)) return undefined;
  const negative = trimmed.startsWith('-');
  const digits = trimmed.replace(/^[-+]/, '');
  const magnitude = /^(0x|#)/i.test(digits) ? BigInt(`0x${digits.replace(/^(0x|#)/i, '')}`) : digits.length > 1 && digits.startsWith('0') ? BigInt(`0o${digits.slice(1)}`) : BigInt(digits);
  const value = negative ? -magnitude : magnitude;
  if (value > 0x7fffffffffffffffn || value < -0x8000000000000000n) return undefined;
  if (value < -0x80000000n || value > 0xffffffffn) return undefined;
  return Number(BigInt.asIntN(32, value));
}

/**
 * hudson.triggers.Trigger.readResolve parses `spec` with CronTabList.create; a spec its lexer
 * (hudson/scheduler/crontab.g) cannot read throws, and XStream's RobustCollectionConverter drops
 * that trigger from the list while the job is saved with 200. The lexer reads digits, letters
 * (H, the @ aliases), `* - / , ( ) @`, spaces and tabs; a `#` line is a comment and a first
 * `TZ=` line names the zone.
 */
function cronLexerAccepts(spec: string): boolean {
  const lines = spec.split(/\r?\n/).map((line) => line.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, ''));
  return lines.every((line, index) => line.startsWith('#') || (index === 0 && line.startsWith('TZ=')) || /^[0-9A-Za-z*\-/,()@ \t]*$/.test(line));
}

/**
 * A config as current Jenkins writes the live object: the fields of the classes in FIELDS in
 * their order, with their defaults, integer fields as XStream read them, and triggers whose spec
 * Jenkins could not parse left out. Elements of other classes keep their order (the simulator
 * does not know their fields).
 */
function reserialize(root: Element): string {
  const visit = (element: Element, className: string | undefined) => {
    if (element.nodeName === 'triggers') {
      for (const trigger of elementsOf(element)) {
        const spec = childElement(trigger, 'spec');
        if (spec && !cronLexerAccepts(spec.textContent ?? '')) element.removeChild(trigger);
      }
    }
    const fields = className ? FIELDS[className] : undefined;
    if (fields) {
      for (const field of fields.filter((f) => f.type)) {
        const held = childElement(element, field.name);
        if (!held) continue;
        const value = xstreamInt(held.textContent ?? '');
        if (value !== undefined) held.textContent = String(value);
        else if (field.type === 'int') held.textContent = '0';
        else element.removeChild(held);
      }
      const document = element.ownerDocument!;
      for (const field of fields) {
        if (field.default !== undefined && !childElement(element, field.name)) {
          const added = document.createElement(field.name);
          added.appendChild(document.createTextNode(field.default));
          element.appendChild(added);
        }
      }
      const position = (e: Element) => fields.findIndex((f) => f.name === e.nodeName);
      const children = Array.from(element.childNodes).filter((n): n is Element => n.nodeType === 1);
      const known = children.filter((e) => position(e) >= 0).sort((a, b) => position(a) - position(b));
      for (const child of [...known, ...children.filter((e) => position(e) < 0)]) element.appendChild(child);
    }
    for (const child of Array.from(element.childNodes).filter((n): n is Element => n.nodeType === 1)) {
      visit(child, child.getAttribute('class') ?? (FIELDS[child.nodeName] ? child.nodeName : undefined));
    }
  };
  visit(root, classOf(root));
  return jenkinsXml(root.toString());
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

/**
 * java.lang.String.compareToIgnoreCase: char by char, Character.toUpperCase then toLowerCase, no
 * locale. Character's mappings are one char to one char (UnicodeData's simple mappings): where the
 * full mapping of JavaScript is longer, the char stays, but for U+0130, whose simple lower case is `i`.
 */
function javaCompareIgnoreCase(a: string, b: string): number {
  const fold = (c: string) => {
    const upper = c.toUpperCase().length === 1 ? c.toUpperCase() : c;
    const lower = upper === '\u0130' ? 'i' : upper.toLowerCase().length === 1 ? upper.toLowerCase() : upper;
    return lower.charCodeAt(0);
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
