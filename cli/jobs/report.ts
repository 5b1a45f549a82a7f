// How a plan and its results read: one line per item, unified diffs of the normalised XML with
// credential ids and tokens masked, and the same as data for --json.
import { createTwoFilesPatch } from 'diff';
import type { ItemResult } from './execute.js';
import { normalizeXml } from './normalize.js';
import { isChange, type Action, type Plan, type PlanItem } from './plan.js';

const SYMBOL: Record<Action, string> = {
  create: '+ create',
  update: '~ update',
  replace: '~ replace',
  unchanged: '= unchanged',
  delete: '- delete',
  refuse: '! refused',
};

export function planLine(item: PlanItem): string {
  const reason = item.reason ? (item.action === 'refuse' ? `: ${item.reason}` : ` (${item.reason})`) : '';
  return `${SYMBOL[item.action]} ${item.kind} ${item.name}${reason}`;
}

/** The unified diff of an update: live config (Jenkins) against the file's, secrets masked. */
export function itemDiff(item: PlanItem): string | undefined {
  if (item.action !== 'update' || item.live === undefined || item.xml === undefined) return undefined;
  const label = `${item.kind} ${item.name}`;
  return createTwoFilesPatch(
    `jenkins: ${label}`,
    `file: ${label}`,
    normalizeXml(item.live, { mask: true }),
    normalizeXml(item.xml, { mask: true }),
    undefined,
    undefined,
    { context: 3 },
  )
    .split('\n')
    .filter((line) => !line.startsWith('====='))
    .join('\n')
    .trimEnd();
}

/** The plan's text: a line per item and, under each update, its diff. */
export function planText(plan: Plan): string {
  const lines: string[] = [];
  for (const item of plan.items) {
    lines.push(planLine(item));
    const diff = itemDiff(item);
    if (diff) lines.push(diff);
  }
  if (plan.items.length === 0) lines.push('nothing to do: the file declares no jobs and Jenkins holds none of its source');
  return lines.join('\n');
}

export interface PlanData {
  sourceId: string;
  changes: boolean;
  counts: Record<Action, number>;
  items: { kind: string; name: string; action: Action; reason?: string; diff?: string }[];
  emptyGuard?: string;
}

export function planData(plan: Plan): PlanData {
  return {
    sourceId: plan.sourceId,
    changes: plan.items.some(isChange),
    counts: countActions(plan.items),
    items: plan.items.map((item) => ({
      kind: item.kind,
      name: item.name,
      action: item.action,
      ...(item.reason ? { reason: item.reason } : {}),
      ...(itemDiff(item) ? { diff: itemDiff(item) } : {}),
    })),
    ...(plan.emptyGuard ? { emptyGuard: plan.emptyGuard } : {}),
  };
}

export function countActions(items: PlanItem[]): Record<Action, number> {
  const counts: Record<Action, number> = { create: 0, update: 0, replace: 0, unchanged: 0, delete: 0, refuse: 0 };
  for (const item of items) counts[item.action]++;
  return counts;
}

const DONE: Record<Action, string> = {
  create: 'created',
  update: 'updated',
  replace: 'replaced',
  unchanged: 'unchanged',
  delete: 'deleted',
  refuse: 'refused',
};

export function resultLine(result: ItemResult): string {
  const { item } = result;
  return result.ok ? `${DONE[item.action]} ${item.kind} ${item.name}` : `failed ${item.kind} ${item.name}: ${result.error}`;
}

/** `3 created, 1 updated, 5 unchanged, 1 deleted, 1 failed`. */
export function summaryLine(results: ItemResult[]): string {
  const ok = results.filter((r) => r.ok);
  const counts = countActions(ok.map((r) => r.item));
  const parts = (['create', 'update', 'replace', 'unchanged', 'delete'] as const)
    .filter((action) => counts[action] > 0 || action === 'unchanged')
    .map((action) => `${counts[action]} ${DONE[action]}`);
  const failed = results.length - ok.length;
  return [...parts, `${failed} failed`].join(', ');
}
