// Checks Jenkins cron specs (hudson.scheduler.CronTab): five fields with H, H(a-b), ranges,
// steps and lists, the @ aliases, several lines, comments and a TZ= line. Returns the problem.

interface Field {
  name: string;
  min: number;
  max: number;
}

const FIELDS: Field[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  // Jenkins accepts both 0 and 7 for Sunday.
  { name: 'day of week', min: 0, max: 7 },
];

const ALIASES = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

// One list term: `*`, `H`, `H(a-b)`, `a` or `a-b`, each with an optional `/step`.
const TERM = /^(?:(\*)|(H)(?:\((\d+)-(\d+)\))?|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/;

/** The problem with a cron spec, or undefined when Jenkins would accept it. */
export function cronProblem(spec: string): string | undefined {
  const lines = spec
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const schedules = lines.filter((line, index) => !(index === 0 && line.startsWith('TZ=')));
  if (schedules.length === 0) return 'empty cron spec';
  for (const line of schedules) {
    const problem = lineProblem(line);
    if (problem) return lines.length > 1 ? `${problem} (in "${line}")` : problem;
  }
  return undefined;
}

function lineProblem(line: string): string | undefined {
  if (line.startsWith('@')) return ALIASES.has(line) ? undefined : `unknown alias ${line}`;
  const parts = line.split(/\s+/);
  if (parts.length !== 5) return `expected 5 fields (minute hour day month weekday), got ${parts.length}`;
  for (const [index, part] of parts.entries()) {
    const field = FIELDS[index]!;
    for (const term of part.split(',')) {
      const problem = termProblem(term, field);
      if (problem) return `${field.name}: ${problem}`;
    }
  }
  return undefined;
}

function termProblem(term: string, field: Field): string | undefined {
  const match = TERM.exec(term);
  if (!match) return `cannot read "${term}"`;
  const [, star, hash, hashFrom, hashTo, from, to, step] = match;
  const numbers = [hashFrom, hashTo, from, to].filter((n): n is string => n !== undefined).map(Number);
  const outside = numbers.find((n) => n < field.min || n > field.max);
  if (outside !== undefined) return `${outside} is outside ${field.min}-${field.max}`;
  const low = Number(hashFrom ?? from);
  const high = Number(hashTo ?? to);
  if ((hashTo !== undefined || to !== undefined) && low > high) return `range ${low}-${high} runs backwards`;
  if (step !== undefined) {
    const stepValue = Number(step);
    if (stepValue === 0) return 'step must be at least 1';
    if (from !== undefined && to === undefined) return `"${term}": a step needs a range, * or H`;
    if (stepValue > field.max - field.min + 1) return `step ${stepValue} is larger than the field`;
  }
  if (star === undefined && hash === undefined && from === undefined) return `cannot read "${term}"`;
  return undefined;
}
