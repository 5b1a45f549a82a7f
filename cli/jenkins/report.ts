// How a plan and its results read: one line per item with the unified diff of each update (kept
// on the plan item), coloured on a terminal, a table of results, and the same as data for --json.
import type { Line, Report, Tone } from '../output/index.js';
import type { ItemResult } from './execute.js';
import { isChange, type Action, type Plan, type PlanItem } from './plan.js';

const SYMBOL: Record<Action, string> = {
  create: '+ create',
  update: '~ update',
  replace: '~ replace',
  unchanged: '= unchanged',
  delete: '- delete',
  refuse: '! refused',
};

const TONE: Record<Action, Tone> = {
  create: 'added',
  update: 'changed',
  replace: 'changed',
  unchanged: 'muted',
  delete: 'removed',
  refuse: 'failed',
};

export function planLine(item: PlanItem): string {
  const reason = item.reason ? (item.action === 'refuse' ? `: ${item.reason}` : ` (${item.reason})`) : '';
  return `${SYMBOL[item.action]} ${item.kind} ${item.name}${reason}`;
}

function diffLine(line: string): Line {
  if (line.startsWith('+++') || line.startsWith('---')) return { text: line, tone: 'strong' };
  if (line.startsWith('+')) return { text: line, tone: 'added' };
  if (line.startsWith('-')) return { text: line, tone: 'removed' };
  if (line.startsWith('@@')) return { text: line, tone: 'muted' };
  return line;
}

/** The plan's lines: one per item and, under each update, its diff. */
export function planLines(plan: Plan): Line[] {
  const lines: Line[] = [];
  for (const item of plan.items) {
    lines.push({ text: planLine(item), tone: TONE[item.action] });
    if (item.diff) lines.push(...item.diff.split('\n').map(diffLine));
  }
  if (plan.items.length === 0) lines.push('nothing to do: the file declares no jobs and Jenkins holds none of its source');
  return lines;
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
      ...(item.diff ? { diff: item.diff } : {}),
    })),
    ...(plan.emptyGuard ? { emptyGuard: plan.emptyGuard } : {}),
  };
}

/** A plan as `jobs diff` shows it (the command decides its exit code). */
export function planReport(plan: Plan): Report & { json: PlanData } {
  const data = planData(plan);
  return {
    json: data,
    lines: planLines(plan),
    warnings: data.emptyGuard ? [`warning: apply would refuse: ${data.emptyGuard}`] : [],
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
  const waited = result.waitedMs === undefined ? '' : ` (Jenkins took ${Math.round(result.waitedMs / 1000)} s to delete it)`;
  return result.ok ? `${DONE[item.action]} ${item.kind} ${item.name}${waited}` : `failed ${item.kind} ${item.name}: ${result.error}`;
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

/** What `jobs apply` did: a table on a terminal, a line per item when piped, then a summary (the command decides its exit code). */
export function applyReport(plan: Plan, results: ItemResult[]): Report {
  const failed = results.filter((r) => !r.ok);
  const shown = results.filter((r) => r.item.action !== 'unchanged');
  const outcome = results.map((r) => ({ kind: r.item.kind, name: r.item.name, action: r.item.action, ok: r.ok, ...(r.error ? { error: r.error } : {}) }));
  return {
    json: { sourceId: plan.sourceId, counts: countActions(plan.items), results: outcome, failed: failed.length },
    table: {
      head: ['RESULT', 'KIND', 'NAME', 'ERROR'],
      rows: shown.map((r) => [r.ok ? DONE[r.item.action] : 'failed', r.item.kind, r.item.name, r.error ?? '']),
    },
    plain: shown.map(resultLine),
    lines: [{ text: `summary: ${summaryLine(results)}`, tone: failed.length > 0 ? 'failed' : 'strong' }],
  };
}
