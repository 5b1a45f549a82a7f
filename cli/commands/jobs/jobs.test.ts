// The jobs commands parse their flags into options and hand them to a `run` that can be swapped;
// the report it returns is printed by the shared printer, and its failure gives the exit code.
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../common/errors.js';
import { fakeDeps } from '../../../test/cli/fakes.js';
import type { Report } from '../../output/index.js';
import { applyCommand, type ApplyOptions } from './apply.js';
import { diffCommand } from './diff.js';
import type { SyncOptions } from './shared.js';

async function parse(command: Command, args: string[]): Promise<void> {
  const program = new Command('repoadmin').exitOverride();
  program.addCommand(command.exitOverride());
  await program.parseAsync(['node', 'repoadmin', command.name(), ...args]);
}

describe('jobs commands', () => {
  it('parse apply flags into options and run the swapped work', async () => {
    const deps = fakeDeps();
    const seen: ApplyOptions[] = [];
    const run = async (options: ApplyOptions): Promise<Report> => {
      seen.push(options);
      return { json: {}, lines: ['done'] };
    };
    await parse(applyCommand(deps, run), ['jenkins-dsl-jobs.json', '--concurrency', '7', '--yes', '--dry-run', '--jenkins-url', 'https://ci.example.com', '--source', 's']);
    expect(seen).toEqual([
      {
        input: { file: 'jenkins-dsl-jobs.json', git: undefined, ref: undefined, path: undefined, ci: undefined, source: 's' },
        jenkins: { jenkinsUrl: 'https://ci.example.com', jenkinsUser: undefined, jenkinsTokenStdin: undefined },
        adopt: false,
        replace: false,
        allowEmpty: false,
        concurrency: 7,
        dryRun: true,
        yes: true,
      },
    ]);
    expect(deps.io.stdoutText()).toBe('done\n');
  });

  it('print the report, then raise its failure', async () => {
    const deps = fakeDeps();
    const run = async (_options: SyncOptions): Promise<Report> => ({ json: {}, lines: ['~ update job a'], failure: new AppError('changes_pending', '') });
    await expect(parse(diffCommand(deps, run), ['jenkins-dsl-jobs.json'])).rejects.toMatchObject({ code: 'changes_pending' });
    expect(deps.io.stdoutText()).toBe('~ update job a\n');
  });

  it('refuse a bad --concurrency before any work', async () => {
    let ran = false;
    const run = async (): Promise<Report> => {
      ran = true;
      return { json: {} };
    };
    await expect(parse(diffCommand(fakeDeps(), run), ['f.json', '--concurrency', '0'])).rejects.toMatchObject({ code: 'usage' });
    expect(ran).toBe(false);
  });
});
