// The planner: compares the file's jobs and views with what Jenkins holds and decides, item by
// item, create / update / unchanged / delete / refuse (docs/jobs.md, "Ownership and sync"). It reads
// the live configs (no local cache), so hand edits in Jenkins are seen.
import type { JenkinsClient, LiveItem, LiveView } from './client.js';
import type { Definitions, JobSpec } from './model.js';
import { itemKey, parentFolders } from './names.js';
import { compareConfig } from './compare.js';
import { mergeLive } from './merge.js';
import { mapLimit } from './pool.js';
import { isOwnedBy, markerOf, withMarker } from './source.js';
import { CLASS, folderXml, jobXml, listViewXml } from './xml.js';

export type Action = 'create' | 'update' | 'replace' | 'unchanged' | 'delete' | 'refuse';
export type ItemKind = 'folder' | 'job' | 'view';

export interface PlanItem {
  kind: ItemKind;
  name: string;
  action: Action;
  /** Why an item is refused or replaced. */
  reason?: string;
  /** The config to send (create, update, replace). */
  xml?: string;
  /** Update: the unified diff of the live config against the file's, secrets masked. */
  diff?: string;
}

export interface Plan {
  sourceId: string;
  items: PlanItem[];
  /** Set when the plan would delete every job we own and --allow-empty was not given. */
  emptyGuard?: string;
}

export interface PlanOptions {
  sourceId: string;
  adopt: boolean;
  replace: boolean;
  allowEmpty: boolean;
  concurrency: number;
}

/** Items that change Jenkins when applied. */
export function isChange(item: PlanItem): boolean {
  return item.action !== 'unchanged' && item.action !== 'refuse';
}

/** The configs the file asks for, without any server: folders, jobs and views, in apply order. */
export function desiredItems(definitions: Definitions, sourceId: string): PlanItem[] {
  return [
    ...definitions.folders.map((name): PlanItem => ({ kind: 'folder', name, action: 'create', xml: folderXml() })),
    ...definitions.jobs.map((job): PlanItem => ({ kind: 'job', name: job.name, action: 'create', xml: desiredJobXml(job, sourceId) })),
    ...[...definitions.views].map(([name, jobs]): PlanItem => ({ kind: 'view', name, action: 'create', xml: listViewXml(name, jobs, withMarker('', sourceId, name)) })),
  ];
}

/** A job's config.xml: the marker records the fingerprint of its trigger token, if it has one. */
function desiredJobXml(job: JobSpec, sourceId: string): string {
  return jobXml(job, withMarker(job.description, sourceId, job.name, job.authToken));
}

export async function planSync(definitions: Definitions, client: JenkinsClient, options: PlanOptions): Promise<Plan> {
  const [liveItems, liveViews] = await Promise.all([client.listItems(), client.listViews()]);
  // Jenkins finds items without regard to case (its item maps are case-insensitive).
  const live = new Map(liveItems.map((item) => [itemKey(item.fullName), item]));
  const ours = (name: string, description: string | null) => isOwnedBy(options.sourceId, name, description);

  const folders = definitions.folders.flatMap((name): PlanItem[] => {
    const item = live.get(itemKey(name));
    if (!item) return [{ kind: 'folder', name, action: 'create', xml: folderXml() }];
    // Only a plain folder takes new items: a multibranch project holds jobs but computes them.
    return item.className === CLASS.folder ? [] : [{ kind: 'folder', name, action: 'refuse', reason: `${name} exists and is not a folder` }];
  });
  const refusedFolders = new Set(folders.filter((f) => f.action === 'refuse').map((f) => f.name));

  const jobs = await mapLimit(definitions.jobs, options.concurrency, (job) =>
    planJob(job, live.get(itemKey(job.name)), { ...options, refusedFolders, ours, client }),
  );

  // A refused job stays out of our views unless it is ours already (refused for its type): a
  // refusal never takes a job out of a view it is in, nor empties a view into a deletion.
  const leftOut = new Set(
    jobs.filter((j) => j.action === 'refuse' && !ours(j.name, live.get(itemKey(j.name))?.description ?? null)).map((j) => j.name),
  );
  // Jenkins takes a deleted job out of every list view (ListView.Listener.onDeleted), and a
  // replace deletes first: a view listing a replaced job must be posted again after it.
  const replaced = new Set(jobs.filter((j) => j.action === 'replace').map((j) => itemKey(j.name)));
  const views = await planViews(definitions, liveViews, leftOut, { ...options, ours, client, replaced });

  const wanted = new Set(definitions.jobs.map((job) => itemKey(job.name)));
  const ownedJobs = liveItems.filter((item) => ours(item.fullName, item.description));
  const deletions = ownedJobs
    .filter((item) => !wanted.has(itemKey(item.fullName)))
    .map((item): PlanItem => ({ kind: 'job', name: item.fullName, action: 'delete' }));

  const plan: Plan = { sourceId: options.sourceId, items: [...folders, ...jobs, ...views.keep, ...deletions, ...views.drop] };
  if (!options.allowEmpty && ownedJobs.length > 0 && deletions.length === ownedJobs.length) {
    plan.emptyGuard =
      `this file would delete every job of source ${options.sourceId} (${ownedJobs.length}) and keep none; ` +
      'if that is intended, pass --allow-empty';
  }
  return plan;
}

interface JobContext extends PlanOptions {
  refusedFolders: Set<string>;
  ours: (name: string, description: string | null) => boolean;
  client: JenkinsClient;
}

async function planJob(job: JobSpec, item: LiveItem | undefined, context: JobContext): Promise<PlanItem> {
  const xml = desiredJobXml(job, context.sourceId);
  const base = { kind: 'job' as const, name: job.name, xml };
  const blocked = parentFolders(job.name).find((folder) => context.refusedFolders.has(folder));
  if (blocked) return { ...base, action: 'refuse', reason: `its folder ${blocked} exists and is not a folder` };
  if (!item) return { ...base, action: 'create' };
  if (!context.ours(item.fullName, item.description) && !context.adopt) return { ...base, action: 'refuse', reason: foreignReason(item.description, context.sourceId) };
  const wantedClass = CLASS[job.kind];
  if (item.className !== wantedClass) {
    if (!context.replace) {
      return {
        ...base,
        action: 'refuse',
        reason: `it is a ${shortClass(item.className)} and the file wants a ${job.kind} job; pass --replace to delete and recreate it (its build history is lost)`,
      };
    }
    return { ...base, action: 'replace', reason: `replaces a ${shortClass(item.className)}; its build history is lost` };
  }
  const live = await context.client.getJobConfig(job.name);
  // What the Jenkinsfile keeps on the job (parameters, tracked properties, actions) is sent back.
  const merged = mergeLive(live, xml);
  const comparison = compareConfig(`job ${job.name}`, live, merged);
  return comparison.equal ? { ...base, xml: merged, action: 'unchanged' } : { ...base, xml: merged, action: 'update', diff: comparison.diff };
}

interface ViewContext extends PlanOptions {
  ours: (name: string, description: string | null) => boolean;
  client: JenkinsClient;
  /** Jobs the plan deletes and creates again (item keys). */
  replaced: Set<string>;
}

async function planViews(
  definitions: Definitions,
  liveViews: LiveView[],
  leftOut: Set<string>,
  context: ViewContext,
): Promise<{ keep: PlanItem[]; drop: PlanItem[] }> {
  const live = new Map(liveViews.map((view) => [view.name, view]));
  const wanted = [...definitions.views]
    .map(([name, jobs]) => [name, jobs.filter((job) => !leftOut.has(job))] as const)
    .filter(([, jobs]) => jobs.length > 0);
  const keep = await mapLimit(wanted, context.concurrency, async ([name, jobs]): Promise<PlanItem> => {
    const xml = listViewXml(name, jobs, withMarker('', context.sourceId, name));
    const view = live.get(name);
    if (!view) return { kind: 'view', name, action: 'create', xml };
    if (!context.ours(name, view.description) && !context.adopt) {
      return { kind: 'view', name, action: 'refuse', xml, reason: foreignReason(view.description, context.sourceId) };
    }
    if (view.className !== CLASS.listView) {
      return { kind: 'view', name, action: 'refuse', xml, reason: `it is a ${shortClass(view.className)}, not a list view` };
    }
    const comparison = compareConfig(`view ${name}`, await context.client.getViewConfig(name), xml);
    if (!comparison.equal) return { kind: 'view', name, action: 'update', xml, diff: comparison.diff };
    const lost = jobs.filter((job) => context.replaced.has(itemKey(job)));
    if (lost.length === 0) return { kind: 'view', name, action: 'unchanged', xml };
    return { kind: 'view', name, action: 'update', xml, reason: `posted again: Jenkins drops ${lost.join(', ')} from it when replacing` };
  });
  // Our views that no job of the file names any more are empty: they go (views we never made
  // stay). One whose jobs were all refused is left as it is.
  const kept = new Set(definitions.views.keys());
  const drop = liveViews
    .filter((view) => context.ours(view.name, view.description) && !kept.has(view.name))
    .map((view): PlanItem => ({ kind: 'view', name: view.name, action: 'delete' }));
  return { keep, drop };
}

function foreignReason(description: string | null, sourceId: string): string {
  const marker = markerOf(description);
  if (marker?.sourceId === sourceId && marker.item !== undefined) {
    return `its marker is that of ${marker.item} (a copy made in Jenkins?); pass --adopt to take it over`;
  }
  return marker
    ? `it is managed by another source (${marker.sourceId}); pass --adopt to take it over`
    : 'it exists and was not made by repoadmin; pass --adopt to take it over';
}

function shortClass(className: string): string {
  return className.split('.').pop() || className || 'item of unknown type';
}
