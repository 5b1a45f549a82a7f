// `repoadmin jobs`: Jenkins jobs from a `<ci>-dsl-jobs.json` file (docs/jobs.md).
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { applyCommand } from './apply.js';
import { diffCommand } from './diff.js';
import { renderCommand } from './render.js';
import { validateCommand } from './validate.js';

export function register(program: Command, deps: Deps): void {
  const jobs = new Command('jobs')
    .summary('Jenkins jobs from a jenkins-dsl-jobs.json file')
    .description('Validate, render, diff and apply Jenkins jobs, folders and views from a <ci>-dsl-jobs.json file.')
    .helpOption('-h, --help', 'show help')
    .addHelpText('after', '\nExample:\n  repoadmin jobs diff jenkins-dsl-jobs.json && repoadmin jobs apply jenkins-dsl-jobs.json --yes');
  for (const make of [validateCommand, renderCommand, diffCommand, applyCommand]) {
    const sub = make(deps);
    sub.copyInheritedSettings(program);
    jobs.addCommand(sub);
  }
  jobs.copyInheritedSettings(program);
  program.addCommand(jobs);
}
