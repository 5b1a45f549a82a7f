// `repoadmin user list`: all users (administrators only).
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example } from '../support.js';

export type UserListOptions = Record<string, never>;

export function userListCommand(deps: Deps, run = runUserList): Command {
  return new Command('list')
    .summary('list users (administrators only)')
    .description('List all users with their role and project.')
    .usage('[--json]')
    .addHelpText('after', example('repoadmin user list', 'repoadmin user list --json | jq -r ".users[].username"'))
    .action(action<object, UserListOptions>(deps, () => ({}), run));
}

export async function runUserList(_opts: UserListOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const answer = await deps.api.listUsers();
  return {
    json: answer,
    table: {
      head: ['USERNAME', 'ROLE', 'PROJECT', 'CREATED', 'USER ID'],
      rows: answer.users.map((u) => [u.username, u.role, u.projectName, u.createdAt, u.userId]),
    },
  };
}
