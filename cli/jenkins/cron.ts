// Checks Jenkins cron specs (hudson.scheduler.CronTab): five fields with H, H(a-b), ranges,
// steps and lists, the @ aliases, several lines, comments and a TZ= first line. Returns the problem.

interface Field {
  name: string;
  min: number;
  max: number;
  /** The top of what a plain `H` picks from (BaseParser.doHash), when not `max`. */
  hashMax?: number;
}

const FIELDS: Field[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  // H keeps to 1-28, which every month has.
  { name: 'day of month', min: 1, max: 31, hashMax: 28 },
  { name: 'month', min: 1, max: 12 },
  // Jenkins accepts both 0 and 7 for Sunday; H picks from 0-6.
  { name: 'day of week', min: 0, max: 7, hashMax: 6 },
];

const ALIASES = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

// One list term: `*`, `H`, `H(a-b)`, `a` or `a-b`, each with an optional `/step`.
const TERM = /^(?:(\*)|(H)(?:\((\d+)-(\d+)\))?|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/;

/** Names of the spaces that look like one and that Jenkins' cron lexer does not take for one. */
const SPACE_NAMES: Record<number, string> = {
  0xa0: 'a no-break space',
  0x1680: 'an Ogham space mark',
  0x2007: 'a figure space',
  0x202f: 'a narrow no-break space',
  0x205f: 'a medium mathematical space',
  0x3000: 'an ideographic space',
  0xfeff: 'a zero-width no-break space',
};

/**
 * The problem with a cron spec, or undefined when Jenkins would accept it. `empty` says whether
 * a spec with no schedule is fine: for SCM polling it is (Jenkins then polls only when a
 * post-commit hook asks), for a timer it never fires.
 */
export function cronProblem(spec: string, options: { empty?: boolean } = {}): string | undefined {
  // CronTabList.create splits on line ends and trims each line as Java's String.trim does (only
  // characters up to U+0020); its lexer (crontab.g) reads only ASCII: a no-break space or any
  // other non-ASCII character fails the whole spec, and Jenkins then drops the trigger.
  for (const raw of spec.split(/\r?\n/)) {
    const line = javaTrim(raw);
    if (line.startsWith('#')) continue;
    const bad = /[^\x20-\x7e\t]/u.exec(line)?.[0];
    if (bad !== undefined) {
      const code = bad.codePointAt(0)!;
      const hex = code.toString(16).toUpperCase().padStart(4, '0');
      const name = SPACE_NAMES[code] ?? (/\s/u.test(bad) ? 'a space other than ASCII' : 'not ASCII');
      return `contains U+${hex} (${name}), which Jenkins' cron parser refuses (it then drops the trigger): use plain spaces and ASCII only`;
    }
  }
  const lines = spec.split(/\r?\n/).map(javaTrim);
  const severalLines = lines.filter((line) => line !== '' && !line.startsWith('#')).length > 1;
  // CronTabList.create: a time zone only on the very first line, and one Java knows.
  if (lines[0]?.startsWith('TZ=')) {
    const zone = lines.shift()!.slice('TZ='.length);
    const problem = timeZoneProblem(zone);
    if (problem) return problem;
  }
  const schedules = lines.filter((line) => line !== '' && !line.startsWith('#'));
  if (schedules.length === 0) return options.empty ? undefined : 'empty cron spec';
  for (const line of schedules) {
    const problem = lineProblem(line);
    if (problem) return severalLines ? `${problem} (in "${line}")` : problem;
  }
  return undefined;
}

/**
 * Jenkins takes a zone only as Java spells it (CronTabList.getValidTimezone compares the ids of
 * TimeZone.getAvailableIDs() with equals), while Intl takes any case: `europe/berlin` is refused,
 * naming the spelling to use.
 */
function timeZoneProblem(zone: string): string | undefined {
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return `unknown time zone "${zone}"`;
  }
  if (zone === '') return 'unknown time zone ""';
  if (resolved !== zone && resolved.toLowerCase() === zone.toLowerCase()) return `unknown time zone "${zone}": Jenkins wants "${resolved}"`;
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
    if (hash !== undefined) {
      // BaseParser.doHash: the step of H or H(a-b) must fit in the range it picks from.
      const hashLow = hashFrom === undefined ? field.min : low;
      const hashHigh = hashTo === undefined ? field.hashMax ?? field.max : high;
      if (stepValue > hashHigh - hashLow + 1) return `step ${stepValue} is larger than the range ${hashLow}-${hashHigh}`;
    }
    if (stepValue > field.max - field.min + 1) return `step ${stepValue} is larger than the field`;
  }
  if (star === undefined && hash === undefined && from === undefined) return `cannot read "${term}"`;
  return undefined;
}

/** java.lang.String.trim: strips characters up to U+0020 at both ends, and nothing else. */
function javaTrim(text: string): string {
  // eslint-disable-next-line no-control-regex -- the characters String.trim strips are the control characters and the space
  return text.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '');
}
