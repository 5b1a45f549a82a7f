// `repoadmin jobs`: Jenkins jobs from a `<ci>-dsl-jobs.json` file (docs/jobs.md).
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { attach } from '../support.js';
import { applyCommand } from './apply.js';
import { diffCommand } from './diff.js';
import { renderCommand } from './render.js';
import { validateCommand } from './validate.js';

export function register(program: Command, deps: Deps): void {
  const jobs = attach(
    program,
    new Command('jobs')
      .summary('Jenkins jobs from a jenkins-dsl-jobs.json file')
      .description('Validate, render, diff and apply Jenkins jobs, folders and views from a <ci>-dsl-jobs.json file.')
      .addHelpText('after', '\nExample:\n  repoadmin jobs diff jenkins-dsl-jobs.json &&\n    repoadmin jobs apply jenkins-dsl-jobs.json --yes'),
  );
  for (const command of [validateCommand(deps), renderCommand(deps), diffCommand(deps), applyCommand(deps)]) attach(jobs, command);
}
