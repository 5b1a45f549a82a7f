// Carries a plan out against Jenkins: folders, then jobs, then views, deletions last; a few at a
// time. One failed item does not stop the others: each result says what happened to its item.
import { isAppError } from '../../common/errors.js';
import type { JenkinsClient } from './client.js';
import { parentFolders } from './names.js';
import { isChange, type Plan, type PlanItem } from './plan.js';
import { mapLimit } from './pool.js';

export interface ItemResult {
  item: PlanItem;
  ok: boolean;
  error?: string;
  /** A delete (or replace) Jenkins took long over: how long, in ms. */
  waitedMs?: number;
}

export interface ExecuteOptions {
  concurrency: number;
  /** Called after each change is done (or has failed). */
  onProgress?: (done: number, total: number, result: ItemResult) => void;
  /** Called once when Jenkins is slow to answer a delete (it stops running builds first). */
  onWaiting?: (item: PlanItem) => void;
}

export async function executePlan(plan: Plan, client: JenkinsClient, options: ExecuteOptions): Promise<ItemResult[]> {
  const changes = plan.items.filter(isChange);
  const total = changes.length;
  let done = 0;
  const failedFolders = new Set<string>();
  const report = (result: ItemResult) => {
    if (isChange(result.item)) options.onProgress?.(++done, total, result);
    return result;
  };

  const run = async (item: PlanItem): Promise<ItemResult> => {
    if (item.action === 'refuse') return { item, ok: false, error: `refused: ${item.reason}` };
    if (!isChange(item)) return { item, ok: true };
    const blocked = parentFolders(item.name).find((folder) => failedFolders.has(folder));
    if (item.kind !== 'view' && blocked) return report({ item, ok: false, error: `its folder ${blocked} could not be created` });
    let waitedFrom: number | undefined;
    const slow = () => {
      waitedFrom ??= Date.now();
      options.onWaiting?.(item);
    };
    const started = Date.now();
    try {
      await perform(item, client, slow);
      return report({ item, ok: true, ...(waitedFrom !== undefined ? { waitedMs: Date.now() - started } : {}) });
    } catch (error) {
      if (item.kind === 'folder') failedFolders.add(item.name);
      return report({ item, ok: false, error: isAppError(error) ? error.message : String(error) });
    }
  };

  const phase = (predicate: (item: PlanItem) => boolean) => plan.items.filter(predicate);
  const results: ItemResult[] = [];
  // Folders one by one, outermost first: a folder must exist before what it holds.
  for (const folder of phase((item) => item.kind === 'folder')) results.push(await run(folder));
  for (const group of [
    phase((item) => item.kind === 'job' && item.action !== 'delete'),
    phase((item) => item.kind === 'view' && item.action !== 'delete'),
    phase((item) => item.kind === 'job' && item.action === 'delete'),
    phase((item) => item.kind === 'view' && item.action === 'delete'),
  ]) {
    results.push(...(await mapLimit(group, options.concurrency, run)));
  }
  return results;
}

async function perform(item: PlanItem, client: JenkinsClient, onSlowDelete: () => void): Promise<void> {
  const xml = item.xml ?? '';
  if (item.kind === 'view') {
    if (item.action === 'create') return client.createView(item.name, xml);
    if (item.action === 'update') return client.updateView(item.name, xml);
    return client.deleteView(item.name);
  }
  if (item.action === 'create') return client.createItem(item.name, xml);
  if (item.action === 'update') return client.updateJob(item.name, xml);
  if (item.action === 'replace') {
    await client.deleteJob(item.name, onSlowDelete);
    return client.createItem(item.name, xml);
  }
  return client.deleteJob(item.name, onSlowDelete);
}
