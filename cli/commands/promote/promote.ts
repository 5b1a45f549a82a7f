// `repoadmin promote`: makes a version the current one of its artifact in an environment.
import { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import { PromotionRequest } from '../../../common/schemas/environments.js';
import { Uuid } from '../../../common/schemas/common.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { environmentName } from '../env/project.js';
import { action, checkRequest, example, withFlagNames } from '../support.js';

export interface Coordinates {
  groupId: string;
  artifactId: string;
  version: string;
}

export interface PromoteOptions {
  /** The record by its coordinates, or by `uid`. */
  coordinates?: Coordinates;
  uid?: string;
  environment: string;
  project?: string;
  branch?: string;
  comment?: string;
}

interface PromoteFlags {
  to: string;
  uid?: string;
  project?: string;
  branch?: string;
  comment?: string;
}

/** `com.acme:app:2.4.0` as its three coordinates. */
export function parseCoordinates(text: string): Coordinates {
  const parts = text.split(':');
  if (parts.length !== 3 || parts.some((p) => p === '')) {
    throw new AppError('usage', `give the record as <group>:<artifact>:<version>, e.g. com.acme:app:2.4.0, not "${text}"`);
  }
  const [groupId, artifactId, version] = parts as [string, string, string];
  return { groupId, artifactId, version };
}

export function parsePromoteFlags(flags: PromoteFlags, operand: string | undefined): PromoteOptions {
  const common = { environment: environmentName(flags.to, '--to'), comment: flags.comment };
  if (flags.uid !== undefined) {
    if (operand !== undefined || flags.project !== undefined || flags.branch !== undefined) {
      throw new AppError('usage', 'give either --uid or <group>:<artifact>:<version> (with --project and --branch), not both');
    }
    if (!Uuid.safeParse(flags.uid).success) throw new AppError('usage', `--uid must be a record's uid (a UUID), not "${flags.uid}"`);
    return { ...common, uid: flags.uid.toLowerCase() };
  }
  if (operand === undefined) throw new AppError('usage', 'give the record as <group>:<artifact>:<version>, or --uid');
  return { ...common, coordinates: parseCoordinates(operand), project: flags.project, branch: flags.branch };
}

export function promoteCommand(deps: Deps, run = runPromote): Command {
  return new Command('promote')
    .summary('make a version the current one in an environment')
    .description(
      "Make a version its artifact's current one in an environment of its project, through the environment's gates (requires, soak, protected; a vetoed version never goes). Exit 0 when promoted or already current, 1 when a gate refuses (its message says which), 3 when there is no such record or environment. Without --branch, the version must be on one branch only.",
    )
    .usage('<group>:<artifact>:<version> --to ENV [--project P] [--branch B] [--comment TEXT] | --uid UID --to ENV')
    .argument('[coordinates]', 'the record, as <group>:<artifact>:<version>')
    .requiredOption('--to <environment>', 'the environment, e.g. prod')
    .option('--uid <uid>', "the record's uid instead of its coordinates")
    .option('--project <name>', 'the project of the record (default: your own, or the one that has it)')
    .option('--branch <name>', 'the branch of the record (default: the one that has it)')
    .option('--comment <text>', 'why, kept in the promotion history')
    .addHelpText(
      'after',
      example('repoadmin promote com.acme:app:2.4.0 --to staging --project shop --branch main', 'repoadmin promote --uid 5c6a1223-076b-4bc0-b0b7-20b0da0e23fd --to prod --comment "CHG-1234"'),
    )
    .action(action<PromoteFlags, PromoteOptions>(deps, (flags, [operand]) => parsePromoteFlags(flags, operand), run));
}

/** A `*` in a coordinate is literal here: searches read it as a wildcard unless escaped. */
const literal = (value: string) => value.replace(/\*/g, '\\*');

/** The request's fields by the flags that set them. */
const FLAGS = { environment: '--to', comment: '--comment', projectName: '--project', branch: '--branch', uid: '--uid' };

/**
 * The request that names the record: its coordinates when project and branch are known, else the uid
 * of the one record a search finds (several branches or projects having it is for the user to pick).
 */
async function recordOf(opts: PromoteOptions, deps: Pick<Deps, 'api'>): Promise<{ request: Omit<PromotionRequest, 'environment'>; what: string }> {
  if (opts.uid !== undefined) return { request: { uid: opts.uid }, what: `record ${opts.uid}` };
  const c = opts.coordinates!;
  const name = `${c.groupId}:${c.artifactId}:${c.version}`;
  const projectName = opts.project ?? (await deps.api.projectName()) ?? undefined;
  if (projectName !== undefined && opts.branch !== undefined) {
    return { request: { projectName, branch: opts.branch, ...c }, what: `${name} on ${projectName} ${opts.branch}` };
  }
  const found = await deps.api.search(
    {
      groupId: literal(c.groupId),
      artifactId: literal(c.artifactId),
      version: literal(c.version),
      projectName: projectName === undefined ? undefined : literal(projectName),
      branch: opts.branch === undefined ? undefined : literal(opts.branch),
    },
    { size: 10 },
  );
  const records = found.versionInformation;
  const where = [projectName && `project ${projectName}`, opts.branch && `branch ${opts.branch}`].filter(Boolean).join(', ');
  if (records.length === 0) throw new AppError('not_found', `no record ${name}${where ? ` on ${where}` : ''}`);
  if (records.length > 1 || found.page.totalElements > 1) {
    const places = records.map((r) => `${r.projectName} ${r.branch}`).join('; ');
    throw new AppError('failed', `${name} is on ${found.page.totalElements} branches (${places}): add --project and --branch, or give --uid`);
  }
  const record = records[0]!;
  return { request: { uid: record.uid }, what: `${name} on ${record.projectName} ${record.branch}` };
}

export async function runPromote(opts: PromoteOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const { request, what } = await recordOf(opts, deps);
  const body = { ...request, environment: opts.environment, comment: opts.comment };
  checkRequest(PromotionRequest, body, FLAGS);
  let outcome;
  try {
    outcome = await deps.api.promote(body);
  } catch (error) {
    // A gate's refusal: the gate's own words, after what was refused.
    if (error instanceof AppError && error.code === 'conflict') throw new AppError('conflict', `${what} cannot go to ${opts.environment}: ${error.message}`, error.details);
    throw withFlagNames(error, FLAGS);
  }
  const { promotion, promoted } = outcome;
  const replaced = promotion.previousUid ? ` (replacing ${promotion.previousUid}${promotion.rollback ? ', a rollback' : ''})` : ' (the first there)';
  return {
    json: { ...promotion, promoted },
    notes: [promoted ? `Promoted ${what} to ${opts.environment}${replaced}.` : `${what} is already current in ${opts.environment}: nothing recorded.`],
  };
}
