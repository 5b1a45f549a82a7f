// `repoadmin veto`: marks a version bad, so it is never promoted, or lifts the mark.
import { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import { Uuid } from '../../../common/schemas/common.js';
import { VetoRequest } from '../../../common/schemas/repositories.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, checkRequest, example, withFlagNames } from '../support.js';

export type VetoOptions = { uid: string; lift: false; reason: string } | { uid: string; lift: true };

export function parseVetoFlags(flags: { reason?: string; lift?: boolean }, uid: string | undefined): VetoOptions {
  if (uid === undefined) throw new AppError('usage', "give the record's uid: repoadmin veto <uid> --reason TEXT, or repoadmin veto --lift <uid>");
  if (!Uuid.safeParse(uid).success) throw new AppError('usage', `the record's uid must be a UUID (repoadmin search --field uid), not "${uid}"`);
  if (flags.lift) {
    if (flags.reason !== undefined) throw new AppError('usage', 'give --reason to veto, or --lift to lift the veto, not both');
    return { uid: uid.toLowerCase(), lift: true };
  }
  if (flags.reason === undefined || flags.reason.trim() === '') throw new AppError('usage', 'missing --reason: say why the version must not be promoted');
  return { uid: uid.toLowerCase(), lift: false, reason: flags.reason };
}

export function vetoCommand(deps: Deps, run = runVeto): Command {
  return new Command('veto')
    .summary('mark a version bad, so it is promoted nowhere (or --lift the mark)')
    .description('A vetoed version cannot be promoted into any environment until the veto is lifted; the record and the page show the reason.')
    .usage('<uid> --reason TEXT | --lift <uid>')
    .argument('[uid]', "the record's uid (repoadmin search --field uid)")
    .option('--reason <text>', 'why the version must not go anywhere')
    .option('--lift', 'lift the veto')
    .addHelpText('after', example('repoadmin veto 5c6a1223-076b-4bc0-b0b7-20b0da0e23fd --reason "corrupts the cache (INC-42)"', 'repoadmin veto --lift 5c6a1223-076b-4bc0-b0b7-20b0da0e23fd'))
    .action(action<{ reason?: string; lift?: boolean }, VetoOptions>(deps, (flags, [uid]) => parseVetoFlags(flags, uid), run));
}

export async function runVeto(opts: VetoOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  if (opts.lift) {
    const record = await deps.api.liftVeto(opts.uid);
    const name = record ? `${record.groupId}:${record.artifactId}:${record.version}` : opts.uid;
    return { json: record ?? { uid: opts.uid, veto: null }, notes: [`Lifted the veto of ${name}: it may be promoted again.`] };
  }
  checkRequest(VetoRequest, { reason: opts.reason }, { reason: '--reason' });
  let record;
  try {
    record = await deps.api.veto(opts.uid, opts.reason);
  } catch (error) {
    throw withFlagNames(error, { reason: '--reason' });
  }
  return { json: record, notes: [`Vetoed ${record.groupId}:${record.artifactId}:${record.version}: it cannot be promoted until repoadmin veto --lift ${opts.uid}.`] };
}
