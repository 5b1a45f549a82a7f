// `repoadmin delete`: moves a version record to the trash, by uid or by its coordinates.
import { Command } from 'commander';
import { AppError, type ErrorReason } from '../../../common/errors.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example } from '../support.js';

export interface DeleteOptions {
  uid?: string;
  coordinates?: { projectName: string; branch: string; groupId: string; artifactId: string; version: string };
  force: boolean;
}

interface DeleteFlags {
  project?: string;
  branch?: string;
  group?: string;
  artifact?: string;
  version?: string;
  force?: boolean;
}

const COORDINATE_FLAGS = ['project', 'branch', 'group', 'artifact', 'version'] as const;

export function parseDeleteFlags(flags: DeleteFlags, uid: string | undefined): DeleteOptions {
  const given = COORDINATE_FLAGS.filter((f) => flags[f] !== undefined);
  if (uid !== undefined && given.length > 0) throw new AppError('usage', 'give either a uid or --project --branch --group --artifact --version, not both');
  if (uid !== undefined) return { uid, force: Boolean(flags.force) };
  if (given.length !== COORDINATE_FLAGS.length) {
    const missing = COORDINATE_FLAGS.filter((f) => flags[f] === undefined).map((f) => `--${f}`);
    throw new AppError('usage', given.length === 0 ? 'give the uid of the record, or its coordinates (--project --branch --group --artifact --version)' : `missing ${missing.join(', ')}`);
  }
  return {
    coordinates: { projectName: flags.project!, branch: flags.branch!, groupId: flags.group!, artifactId: flags.artifact!, version: flags.version! },
    force: Boolean(flags.force),
  };
}

export function deleteCommand(deps: Deps, run = runDelete): Command {
  return new Command('delete')
    .summary('move a version record to the trash (restorable for 7 days)')
    .description(
      "Move a record to the trash, by uid or by its coordinates. A key's latest record needs --force;\n" +
        'the highest remaining version then becomes the latest. repoadmin trash restore undoes it.',
    )
    .usage('<uid> [--force] | --project P --branch B --group G --artifact A --version V [--force]')
    .argument('[uid]', 'the record\'s uid')
    .option('--project <name>', 'project of the record')
    .option('--branch <name>', 'branch of the record')
    .option('--group <groupId>', 'groupId of the record')
    .option('--artifact <artifactId>', 'artifactId of the record')
    .option('--version <version>', 'version of the record')
    .option('--force', "also delete a key's latest record (or an immutable version)")
    .addHelpText('after', example('repoadmin delete 5c6a1223-076b-4bc0-b0b7-20b0da0e23fd', 'repoadmin delete --project shop --branch main --group com.acme --artifact app --version 1.2.0 --force'))
    .action(action<DeleteFlags, DeleteOptions>(deps, (flags, [uid]) => parseDeleteFlags(flags, uid), run));
}

/**
 * What the server refuses without force, said with this command's flag: the server's message names
 * the API's `force=true`, its `reason` says which refusal it is (docs/api.md, "Errors").
 */
const NEEDS_FORCE: Partial<Record<ErrorReason, string>> = {
  latest_record: "is its key's latest record: delete it with --force, and the highest remaining version becomes the latest",
  immutable_version: 'has a version that is immutable on this server: delete it with --force',
};

const coordinatesOf = (c: NonNullable<DeleteOptions['coordinates']>) => `${c.groupId}:${c.artifactId}:${c.version} on ${c.projectName} ${c.branch}`;

/** A `*` in a coordinate is literal here: searches read it as a wildcard unless escaped. */
const literal = (value: string) => value.replace(/\*/g, '\\*');

export async function runDelete(opts: DeleteOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const what = opts.coordinates ? coordinatesOf(opts.coordinates) : `record ${opts.uid}`;
  let uid = opts.uid;
  if (uid === undefined) {
    const c = opts.coordinates!;
    const found = await deps.api.search(
      { projectName: literal(c.projectName), branch: literal(c.branch), groupId: literal(c.groupId), artifactId: literal(c.artifactId), version: literal(c.version) },
      { size: 1 },
    );
    const record = found.versionInformation[0];
    if (!record) throw new AppError('not_found', `no record ${what}`);
    uid = record.uid;
  }
  try {
    await deps.api.deleteVersion(uid, opts.force);
  } catch (error) {
    const needsForce = error instanceof AppError && error.details.reason && NEEDS_FORCE[error.details.reason];
    if (needsForce) throw new AppError(error.code, `${what} ${needsForce}`, { reason: error.details.reason });
    throw error;
  }
  return { json: { uid, deleted: true }, notes: [`Moved ${uid} to the trash (repoadmin trash restore ${uid} puts it back).`] };
}
