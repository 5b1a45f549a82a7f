// DOM for the table rows and their detail. Record values only ever reach the page as text nodes
// or checked attributes; the description goes through markdown.ts.
import { parseCreationDate } from '../../common/dates.js';
import type { EnvironmentList, Promotion } from '../../common/schemas/environments.js';
import type { Provenance, VersionInformation } from '../../common/schemas/repositories.js';

/** Why a version may not be promoted, by whom and when; null when it may. */
type Veto = VersionInformation['veto'];

/** A record's veto; a server older than environments sends none. */
export function vetoOf(record: VersionInformation): Veto {
  return record.veto ?? null;
}

/** A version as text, struck through with the veto's reason beside it when vetoed. */
function versionText(version: string, veto: Veto): Child[] {
  if (!veto) return [h('span', { class: 'version' }, breakable(version))];
  return [
    h('del', { class: 'version vetoed', title: `Vetoed: ${veto.reason}` }, breakable(version)),
    ' ',
    h('span', { class: 'veto-reason' }, `vetoed: ${veto.reason}`),
  ];
}

type Child = Node | string | null | undefined | false;

/** A small element builder: attributes are set with setAttribute, children appended as nodes or text. */
export function h(tag: string, attributes: Record<string, string | boolean | undefined> = {}, ...children: Child[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === true) element.setAttribute(name, '');
    else if (typeof value === 'string') element.setAttribute(name, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) element.append(child);
  }
  return element;
}

export const COLUMN_COUNT = 8;

/**
 * An identifier (`com.acme.payments`, `release/1.x`, a UUID) as text with a line-break chance after
 * each dot, dash, underscore, slash, colon, at and plus, so that a narrow column wraps it between
 * its parts rather than inside one. Copying the text gives it back unchanged.
 */
export function breakable(text: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const part of text.split(/(?<=[._\-/:@+])/)) {
    if (fragment.childNodes.length > 0) fragment.append(document.createElement('wbr'));
    fragment.append(part);
  }
  return fragment;
}

const shortDate = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const fullDate = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'long' });

export function coordinates(record: VersionInformation): string {
  return `${record.groupId}:${record.artifactId}:${record.version}`;
}

/** The date in the reader's time zone, with the exact time (and UTC) on hover. */
function dateElement(text: string): HTMLElement {
  const date = parseCreationDate(text);
  if (!date) return h('span', {}, text);
  return h('time', { datetime: date.toISOString(), title: `${fullDate.format(date)}\n${date.toISOString()} UTC` }, shortDate.format(date));
}

export function detailId(record: VersionInformation): string {
  return `detail-${record.uid}`;
}

export function recordRow(record: VersionInformation, expanded: boolean): HTMLElement {
  const toggle = h(
    'button',
    {
      type: 'button',
      class: 'toggle',
      'aria-expanded': String(expanded),
      'aria-controls': detailId(record),
      'aria-label': `Details of ${record.artifactId} ${record.version} (${record.projectName}, ${record.branch})`,
      'data-uid': record.uid,
    },
    h('span', { class: 'chevron', 'aria-hidden': 'true' }),
  );
  const veto = vetoOf(record);
  const version = h(
    'td',
    { class: 'c-version', 'data-label': 'Version' },
    veto ? h('del', { class: 'version vetoed', title: `Vetoed: ${veto.reason}` }, breakable(record.version)) : h('span', { class: 'version' }, breakable(record.version)),
  );
  if (veto) version.append(' ', h('span', { class: 'badge veto', title: `Vetoed by ${veto.by}: ${veto.reason}` }, 'vetoed'));
  if (record.latestVersion) version.append(' ', h('span', { class: 'badge', title: 'The latest version of this project, artifact and branch' }, 'latest'));
  if (record.provenance) version.append(' ', verifiedMark(record.provenance));
  return h(
    'tr',
    { class: expanded ? 'record open' : 'record', 'data-uid': record.uid },
    h('td', { class: 'c-toggle' }, toggle),
    h('td', { class: 'c-project', 'data-label': 'Project' }, breakable(record.projectName)),
    h('td', { class: 'c-branch', 'data-label': 'Branch' }, breakable(record.branch)),
    h('td', { class: 'c-group', 'data-label': 'Group' }, breakable(record.groupId)),
    h('td', { class: 'c-artifact', 'data-label': 'Artifact' }, breakable(record.artifactId)),
    version,
    h('td', { class: 'c-type', 'data-label': 'Type' }, breakable(record.type)),
    h('td', { class: 'c-date', 'data-label': 'Date' }, dateElement(record.creationDate)),
  );
}

/** A web address, or null for anything else (a `javascript:` one above all): what may become a link. */
function webAddress(address: string | null): string | null {
  return address && /^https?:\/\//i.test(address) ? address : null;
}

/** What the verified ID token says built the record: `acme/shop at refs/heads/main, commit 1a2b3c4d5e6f`. */
export function builtBy(provenance: Provenance): string {
  const what = provenance.repository ?? provenance.subject;
  const ref = provenance.ref ? ` at ${provenance.ref}` : '';
  const commit = provenance.sha ? `, commit ${provenance.sha.slice(0, 12)}` : '';
  return `${what}${ref}${commit}`;
}

/**
 * The "verified" mark of a record published through a trusted publisher: a link to the run that
 * built it, saying in its title which repository, ref and commit the CI's signed ID token named.
 */
function verifiedMark(provenance: Provenance): HTMLElement {
  const title = `Verified: built by ${builtBy(provenance)}, as the CI's signed ID token says (${provenance.issuer})`;
  const runUrl = webAddress(provenance.runUrl);
  return runUrl
    ? h('a', { class: 'badge verified', href: runUrl, target: '_blank', rel: 'noopener noreferrer', title, 'aria-label': title }, 'verified')
    : h('span', { class: 'badge verified', title }, 'verified');
}

/** The detail's account of where a verified record was built. */
function provenanceFacts(provenance: Provenance): Child[] {
  const runUrl = webAddress(provenance.runUrl);
  const run = runUrl
    ? h('a', { href: runUrl, target: '_blank', rel: 'noopener noreferrer', class: 'run' }, breakable(runUrl))
    : h('span', { class: 'muted' }, provenance.runId ?? 'not named');
  return [
    h('dt', {}, 'Built by'),
    h(
      'dd',
      { class: 'provenance' },
      h('span', { class: 'badge verified' }, 'verified'),
      ' ',
      breakable(provenance.repository ?? provenance.subject),
      provenance.ref ? h('span', {}, ' at ', h('code', {}, breakable(provenance.ref))) : null,
      provenance.sha ? h('span', {}, ', commit ', h('code', { class: 'sha', title: provenance.sha }, provenance.sha.slice(0, 12))) : null,
      provenance.workflow ? h('span', { class: 'workflow' }, ' (', breakable(provenance.workflow), ')') : null,
    ),
    h('dt', {}, 'Run'),
    h('dd', {}, run),
  ];
}

function repositoryLink(address: string | null): Child {
  if (!address) return h('span', { class: 'muted' }, 'not given');
  // Only web addresses become links; ssh and scp-style git addresses are shown as text.
  if (/^https?:\/\//i.test(address)) {
    return h('a', { href: address, target: '_blank', rel: 'noopener noreferrer', class: 'repository' }, breakable(address));
  }
  return h('code', { class: 'repository' }, breakable(address));
}

/**
 * The detail row of a record. `description` is filled in by the caller once the Markdown module
 * has loaded; `showAll` is the action of the "all versions" button.
 */
export function detailRow(record: VersionInformation): {
  row: HTMLElement;
  description: HTMLElement;
  copy: HTMLButtonElement;
  showAll: HTMLButtonElement;
  promotions: HTMLElement;
} {
  const description = h('div', { class: 'description markdown' });
  if (record.description) description.append(h('p', { class: 'muted' }, 'Loading the description…'));
  else description.append(h('p', { class: 'muted' }, 'No description.'));
  const copy = h('button', { type: 'button', class: 'ghost small copy', 'data-copy': coordinates(record) }, 'Copy') as HTMLButtonElement;
  const showAll = h('button', { type: 'button', class: 'link' }, `All versions of ${record.artifactId} on ${record.branch}`) as HTMLButtonElement;
  const date = parseCreationDate(record.creationDate);
  const veto = vetoOf(record);
  const vetoAt = veto ? parseCreationDate(veto.at) : undefined;
  const promotions = h(
    'section',
    { class: 'promotions', 'aria-label': `Promotions of ${record.artifactId}` },
    h('h3', {}, `Promotions of ${record.artifactId}`),
    h('p', { class: 'muted' }, 'Loading the promotions…'),
  );
  const facts = h(
    'dl',
    { class: 'facts' },
    h('dt', {}, 'Coordinates'),
    h('dd', { class: 'coordinates' }, h('code', {}, breakable(coordinates(record))), ' ', copy, h('span', { class: 'copied', role: 'status' })),
    h('dt', {}, 'Repository'),
    h('dd', {}, repositoryLink(record.repositoryUrl)),
    ...(record.provenance ? provenanceFacts(record.provenance) : []),
    h('dt', {}, 'Published'),
    h('dd', {}, date ? `${fullDate.format(date)}` : record.creationDate),
    h('dt', {}, 'Project · branch'),
    h('dd', {}, breakable(`${record.projectName} · ${record.branch}`)),
    h('dt', {}, 'UID'),
    h('dd', {}, h('code', { class: 'uid' }, breakable(record.uid))),
    veto && h('dt', {}, 'Vetoed'),
    veto && h('dd', { class: 'veto' }, `${veto.reason} (${veto.by}, ${vetoAt ? fullDate.format(vetoAt) : veto.at})`),
    h('dd', { class: 'more' }, showAll),
  );
  const row = h(
    'tr',
    { class: 'detail', id: detailId(record), 'data-uid': record.uid },
    h('td', { colspan: String(COLUMN_COUNT) }, h('div', { class: 'detail-body' }, description, facts, promotions)),
  );
  return { row, description, copy, showAll, promotions };
}

/** A full-width row with a message and optional buttons: empty, error and loading states. */
export function messageRow(kind: 'empty' | 'error' | 'loading', title: string, text: string, ...actions: HTMLElement[]): HTMLElement {
  return h(
    'tr',
    { class: `message ${kind}` },
    h(
      'td',
      { colspan: String(COLUMN_COUNT) },
      h('p', { class: 'message-title' }, title),
      text ? h('p', {}, text) : null,
      actions.length ? h('p', { class: 'message-actions' }, ...actions) : null,
    ),
  );
}

/** The promotion history of an artifact, newest first: when, where, which version replaced which, who, why. */
export function promotionList(promotions: Promotion[], total: number): Child[] {
  if (promotions.length === 0) return [h('p', { class: 'muted' }, 'Never promoted.')];
  const items = promotions.map((p) => {
    const at = parseCreationDate(p.promotedAt);
    return h(
      'li',
      { 'data-promotion': p.id },
      h('time', { datetime: p.promotedAt, title: at ? `${fullDate.format(at)}\n${p.promotedAt}` : p.promotedAt }, at ? shortDate.format(at) : p.promotedAt),
      ' ',
      h('span', { class: 'env' }, p.environment),
      ' ',
      h('span', { class: 'version' }, breakable(p.version)),
      p.rollback && ' ',
      p.rollback && h('span', { class: 'badge rollback' }, 'rollback'),
      p.previousVersion ? h('span', { class: 'muted' }, ` replacing ${p.previousVersion}`) : null,
      h('span', { class: 'muted' }, ` · ${p.promotedBy.username ?? 'unknown'}`),
      p.comment ? h('span', { class: 'comment' }, ` · ${p.comment}`) : null,
    );
  });
  const more = total > promotions.length ? h('p', { class: 'muted' }, `The newest ${promotions.length} of ${total}.`) : null;
  return [h('ol', { class: 'history' }, ...items), more];
}

/**
 * What runs where in one project: a row per artifact, a column per environment (in the project's
 * order) with its current version there, struck through with the reason when vetoed.
 */
export function environmentsTable(list: EnvironmentList): HTMLElement {
  const keys = new Map<string, { groupId: string; artifactId: string }>();
  for (const env of list.environments) for (const c of env.current) keys.set(`${c.groupId}:${c.artifactId}`, c);
  const gates = (env: EnvironmentList['environments'][number]) =>
    [env.requires && `after ${env.requires}`, env.soakMinutes && `${env.soakMinutes} min soak`, env.protected && 'protected'].filter(Boolean).join(', ');
  const head = h(
    'tr',
    {},
    h('th', { scope: 'col' }, 'Artifact'),
    ...list.environments.map((env) => h('th', { scope: 'col', 'data-env': env.name, title: gates(env) || undefined }, env.name)),
  );
  const body = [...keys.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, key]) =>
      h(
        'tr',
        { 'data-artifact': name },
        h('th', { scope: 'row' }, breakable(name)),
        ...list.environments.map((env) => {
          const current = env.current.find((c) => c.groupId === key.groupId && c.artifactId === key.artifactId);
          if (!current) return h('td', { 'data-env': env.name, class: 'none' }, h('span', { class: 'muted', 'aria-label': 'none' }, '–'));
          const by = current.promotedBy.username ?? 'unknown';
          return h('td', { 'data-env': env.name, title: `Promoted by ${by}, ${current.promotedAt}` }, ...versionText(current.record.version, vetoOf(current.record)));
        }),
      ),
    );
  return h(
    'div',
    { class: 'card environments-card', 'data-project': list.projectName },
    h('h3', {}, breakable(list.projectName)),
    h('div', { class: 'table-scroll' }, h('table', { class: 'environments-table' }, h('thead', {}, head), h('tbody', {}, ...body))),
    keys.size === 0 ? h('p', { class: 'muted' }, 'Nothing promoted yet.') : null,
  );
}
