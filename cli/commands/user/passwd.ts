// `repoadmin user passwd`: changes a password; one's own when no user is named, then logs in again.
import { Command } from 'commander';
import { sameUserId } from '../../../common/schemas/users.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, example, newPassword } from '../support.js';
import { findUser, isUserId } from './find.js';

export interface UserPasswdOptions {
  /** A user name or userId; none means one's own. */
  user?: string;
  passwordStdin: boolean;
}

export function userPasswdCommand(deps: Deps, run = runUserPasswd): Command {
  return new Command('passwd')
    .summary("change a password (one's own when no user is given)")
    .description(
      "Change a password. Without a user, changes one's own and logs in again with the new password " +
        '(the server revokes the old token). Administrators may change anyone\'s.',
    )
    .usage('[<username|userId>] [--password-stdin]')
    .argument('[user]', 'user name or userId')
    .option('--password-stdin', 'read the new password from standard input')
    .addHelpText('after', example('repoadmin user passwd', 'printf %s "$NEW_PASSWORD" | repoadmin user passwd shop-ci --password-stdin'))
    .action(
      action<{ passwordStdin?: boolean }, UserPasswdOptions>(
        deps,
        (flags, [user]) => ({ user, passwordStdin: Boolean(flags.passwordStdin) }),
        run,
      ),
    );
}

export async function runUserPasswd(opts: UserPasswdOptions, deps: Pick<Deps, 'io' | 'env' | 'prompter' | 'api' | 'config'>): Promise<Report> {
  const creds = await deps.api.credentials();
  let userId: string | undefined;
  let username: string | undefined;
  if (!opts.user || opts.user === creds.username || sameUserId(opts.user, creds.userId)) {
    userId = creds.userId;
    username = creds.username;
    if (!userId || !username) ({ userId, username } = await deps.api.me());
  } else if (isUserId(opts.user)) {
    userId = opts.user;
  } else {
    ({ userId, username } = await findUser(deps, opts.user));
  }
  const own = sameUserId(userId, creds.userId);
  const whose = username ?? userId;
  const password = await newPassword(deps, opts.passwordStdin, whose);
  const result = await deps.api.changePassword(userId, password);
  const notes = [`Changed the password of ${whose}.`];

  if (own) {
    const url = await deps.api.serverUrl();
    const fresh =
      result.token && result.expiresAt
        ? { token: result.token, expiresAt: result.expiresAt }
        : await deps.api.generateToken({ username: username!, password }, url);
    if (creds.source === 'config') {
      await deps.config.save({
        url,
        username: username!,
        userId,
        token: fresh.token,
        expiresAt: fresh.expiresAt,
        projectName: creds.projectName,
        role: creds.role,
      });
      notes.push(`Logged in again as ${username}; the new token is stored and valid until ${fresh.expiresAt}.`);
    } else {
      const where = { flag: '--token', env: 'REPOADMIN_TOKEN', login: 'REPOADMIN_PASSWORD', oidc: 'the ID token' }[creds.source];
      notes.push(`The old token no longer works: update ${where}.`);
    }
  }
  return { json: { userId: result.userId, valid: result.valid }, notes };
}
