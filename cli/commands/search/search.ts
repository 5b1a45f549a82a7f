// `repoadmin search`: finds version records; `--latest --field version` is made for scripts.
import { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import { PAGE_SIZE_MAX, SORT_ALIASES, SORT_FIELDS, SearchRequest, type SearchResult, type VersionInformation } from '../../../common/schemas/repositories.js';
import type { PageRequestParams } from '../../api/client.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { environmentName } from '../env/project.js';
import { action, checkRequest, example, wholeNumber, withFlagNames } from '../support.js';

/** The fields `--field` can print: those of one record of the answer. */
export const FIELDS = [
  'uid', 'projectName', 'branch', 'groupId', 'artifactId', 'version', 'repositoryUrl', 'creationDate', 'type', 'latestVersion', 'description',
] as const;
export type Field = (typeof FIELDS)[number];

/** The request's fields and query parameters under the flags that set them. */
const FLAGS = {
  groupId: '--group',
  artifactId: '--artifact',
  version: '--version',
  projectName: '--project',
  branch: '--branch',
  type: '--type',
  environment: '--env',
  page: '--page',
  size: '--size',
  sortField: '--sort',
  sortDirection: '--sort',
};

/** The server's largest page: what `--all` asks for. */
const ALL_PAGE_SIZE = PAGE_SIZE_MAX;

export interface SearchOptions {
  filters: SearchRequest;
  latest: boolean;
  paging: PageRequestParams;
  all: boolean;
  field?: Field;
}

interface SearchFlags {
  group?: string;
  artifact?: string;
  version?: string;
  project?: string;
  branch?: string;
  type?: string;
  env?: string;
  latest?: boolean;
  verified?: boolean;
  page?: string;
  size?: string;
  sort?: string;
  all?: boolean;
  field?: string;
}

export function parseSearchFlags(flags: SearchFlags): SearchOptions {
  if (flags.field !== undefined && !(FIELDS as readonly string[]).includes(flags.field)) {
    throw new AppError('usage', `--field must be one of ${FIELDS.join(', ')}, not "${flags.field}"`);
  }
  if (flags.env !== undefined) environmentName(flags.env, '--env');
  if (flags.all && flags.page !== undefined) throw new AppError('usage', 'pass either --all or --page, not both');
  let sortField: string | undefined;
  let sortDirection: 'ASC' | 'DESC' | undefined;
  if (flags.sort !== undefined) {
    const [field, direction, extra] = flags.sort.split(':');
    if (!field || extra !== undefined || (direction !== undefined && !/^(asc|desc)$/i.test(direction))) {
      throw new AppError('usage', `--sort takes field[:asc|desc], e.g. version:desc, not "${flags.sort}"`);
    }
    if (!(SORT_FIELDS as readonly string[]).includes(field!) && !Object.hasOwn(SORT_ALIASES, field!)) {
      throw new AppError('usage', `--sort: the field must be one of ${SORT_FIELDS.join(', ')}, not "${field}"`);
    }
    sortField = field;
    sortDirection = direction ? (direction.toUpperCase() as 'ASC' | 'DESC') : undefined;
  }
  return {
    filters: {
      groupId: flags.group,
      artifactId: flags.artifact,
      version: flags.version,
      projectName: flags.project,
      branch: flags.branch,
      type: flags.type,
      verified: flags.verified ? true : undefined,
      environment: flags.env,
      // With --env, --latest means the environment's current record, which need not be its branch's latest.
      latestVersion: flags.latest && flags.env === undefined ? true : undefined,
    },
    latest: Boolean(flags.latest),
    paging: { page: wholeNumber(flags.page, '--page'), size: wholeNumber(flags.size, '--size', 1, PAGE_SIZE_MAX), sortField, sortDirection },
    all: Boolean(flags.all),
    field: flags.field as Field | undefined,
  };
}

export function searchCommand(deps: Deps, run = runSearch): Command {
  return new Command('search')
    .summary('find version records')
    // One paragraph: commander wraps it to the terminal's width.
    .description(
      'Find version records. Filters match exactly; * is a wildcard (com.acme.*). --latest keeps the latest ' +
        'record of each project and branch and fails (exit 3) when there is none. --field prints one field per ' +
        'match, for scripts.',
    )
    .usage('[--group G] [--artifact A] [--latest] [options]')
    .option('--group <groupId>', 'group id')
    .option('--artifact <artifactId>', 'artifact id')
    .option('--version <version>', 'version')
    .option('--project <name>', 'project')
    .option('--branch <branch>', 'branch')
    .option('--type <type>', 'kind of artifact')
    .option('--env <environment>', "only the records current in this environment of their project (with --latest: the one current there)")
    .option('--latest', 'only latest versions; no match is an error (exit 3)')
    .option('--verified', 'only records published by a trusted publisher, with the run that built them')
    .option('--page <n>', 'page, from 1')
    .option('--size <n>', 'records per page (1 to 100, default 10)')
    .option('--sort <field[:dir]>', `sort by ${SORT_FIELDS.join(', ')}`)
    .option('--all', 'every page')
    .option('--field <name>', `print only this field, one line per match (${FIELDS.join(', ')})`)
    .addHelpText(
      'after',
      example(
        'V=$(repoadmin search --group com.acme --artifact app --branch main \\\n    --latest --field version)',
        'repoadmin search --group "com.acme.*" --sort version:desc --size 20',
        'repoadmin search --project shop --env prod',
      ),
    )
    .action(action<SearchFlags, SearchOptions>(deps, parseSearchFlags, run));
}

function describe(filters: SearchRequest): string {
  const parts = Object.entries(filters).filter(([key, value]) => value !== undefined && key !== 'latestVersion' && key !== 'verified');
  return parts.length ? parts.map(([key, value]) => `${key} ${String(value)}`).join(', ') : 'any record';
}

async function everyPage(opts: SearchOptions, deps: Pick<Deps, 'io' | 'api' | 'settings'>): Promise<SearchResult> {
  const records: VersionInformation[] = [];
  const progress = deps.io.stderrIsTTY && !deps.settings.quiet && !deps.settings.json;
  for (let page = 1; ; page++) {
    const answer = await deps.api.search(opts.filters, { ...opts.paging, page, size: ALL_PAGE_SIZE });
    records.push(...answer.versionInformation);
    if (progress) deps.io.stderr.write(`\rfetched ${records.length} of ${answer.page.totalElements}`);
    if (page >= answer.page.totalPages || answer.versionInformation.length === 0) {
      if (progress) deps.io.stderr.write('\n');
      return {
        versionInformation: records,
        page: { totalElements: answer.page.totalElements, totalPages: 1, currentPage: 1, numberOfElements: records.length },
      };
    }
  }
}

export async function runSearch(opts: SearchOptions, deps: Pick<Deps, 'io' | 'api' | 'settings'>): Promise<Report> {
  if (opts.field && deps.settings.json) throw new AppError('usage', 'pass either --field or --json, not both');
  checkRequest(SearchRequest, opts.filters, FLAGS);
  let answer: SearchResult;
  try {
    answer = opts.all ? await everyPage(opts, deps) : await deps.api.search(opts.filters, opts.paging);
  } catch (error) {
    throw withFlagNames(error, FLAGS);
  }
  const records = answer.versionInformation;
  if (opts.latest && records.length === 0) {
    const what = opts.filters.environment === undefined ? 'no latest version' : `nothing current in ${opts.filters.environment}`;
    throw new AppError('nothing_found', `${what} matches ${describe({ ...opts.filters, environment: undefined })}`);
  }
  // The total, not the page: `--size 1` must not pick one of several latest records by surprise.
  const matched = Math.max(records.length, answer.page.totalElements);
  if (opts.latest && opts.field && matched > 1) {
    const named = records.map((r) => `project ${r.projectName} branch ${r.branch}`);
    if (matched > records.length) named.push(`and ${matched - records.length} more`);
    throw new AppError('failed', `--latest matched ${matched} records (${named.join('; ')}): add --branch or --project to pick one`);
  }
  const notes: string[] = [];
  if (opts.all && opts.paging.size !== undefined) notes.push(`--all fetches every record, ${ALL_PAGE_SIZE} a request: --size is ignored.`);
  if (records.length === 0 && answer.page.totalElements > 0) {
    notes.push(`Page ${answer.page.currentPage} is past the last page (${answer.page.totalPages}) of the ${answer.page.totalElements} records that match ${describe(opts.filters)}.`);
  } else if (records.length === 0) notes.push(`No versions match ${describe(opts.filters)}.`);
  const { currentPage, totalPages, totalElements } = answer.page;
  if (!opts.all && currentPage < totalPages) {
    notes.push(`Page ${currentPage} of ${totalPages} (${totalElements} records): --page ${currentPage + 1} for the next, --all for every page.`);
  }
  if (opts.field) {
    const field = opts.field;
    // One line per match (docs/cli.md), also for a Markdown description: line breaks become spaces.
    return { json: answer, lines: records.map((r) => String(r[field] ?? '').trim().replace(/\s*[\r\n]+\s*/g, ' ')), notes };
  }
  const head = ['PROJECT', 'BRANCH', 'GROUP', 'ARTIFACT', 'VERSION', 'TYPE', 'LATEST', 'CREATED', 'UID'];
  const row = (r: VersionInformation) => [r.projectName, r.branch, r.groupId, r.artifactId, r.version, r.type, r.latestVersion ? 'latest' : '', r.creationDate, r.uid];
  // --verified: the run that built each record, where its provenance names one.
  return {
    json: answer,
    table: opts.filters.verified
      ? { head: [...head, 'BUILT BY'], rows: records.map((r) => [...row(r), r.provenance?.runUrl ?? r.provenance?.subject ?? '']) }
      : { head, rows: records.map(row) },
    notes,
  };
}
