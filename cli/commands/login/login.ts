// `repoadmin login`: exchanges user name and password for a token and stores it for that server, or
// with --with-token stores a token read from standard input (a project token, the gh convention).
import { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import { isProjectToken } from '../../../common/schemas/tokens.js';
import { tokenClaims } from '../../api/session.js';
import { normalizeUrl } from '../../config/url.js';
import { canPrompt, type Deps } from '../../deps.js';
import { cliInvocation } from '../../invocation.js';
import type { Report } from '../../output/index.js';
import { action, example, passwordFromStdin, valueOrAsk } from '../support.js';

export interface LoginOptions {
  username?: string;
  passwordStdin: boolean;
  withToken?: boolean;
}

export const DEFAULT_SERVER = 'http://localhost:9090';

export function loginCommand(deps: Deps, run = runLogin): Command {
  return new Command('login')
    .summary('log in to a server and store the token')
    .description(
      'Log in to a registry server and store the token in the config file (mode 0600). ' +
        'The server comes from --url, REPOADMIN_URL or the current login; the user name from ' +
        '--username or REPOADMIN_USERNAME; the password from standard input (--password-stdin), ' +
        'REPOADMIN_PASSWORD, or a prompt on a terminal.',
    )
    .usage('[--url URL] [--username U | --with-token] [options]')
    .option('--username <name>', 'user name (env: REPOADMIN_USERNAME)')
    .option('--password-stdin', 'read the password from standard input')
    .option('--with-token', 'read a token (a project token, rpa_...) from standard input and store it instead')
    .addHelpText(
      'after',
      example(
        'repoadmin login --url http://localhost:9090 --username admin',
        'printf %s "$PASSWORD" | repoadmin login --username ci --password-stdin',
        'printf %s "$TOKEN" |\n    repoadmin login --url https://registry.example.com --with-token',
      ),
    )
    .action(
      action<{ username?: string; passwordStdin?: boolean; withToken?: boolean }, LoginOptions>(
        deps,
        (flags) => {
          if (flags.withToken && (flags.username !== undefined || flags.passwordStdin)) {
            throw new AppError('usage', '--with-token reads a token, not a user name and password: leave out --username and --password-stdin');
          }
          return { username: flags.username, passwordStdin: Boolean(flags.passwordStdin), withToken: Boolean(flags.withToken) };
        },
        run,
      ),
    );
}

type LoginDeps = Pick<Deps, 'io' | 'env' | 'prompter' | 'settings' | 'api' | 'config'>;

async function loginUrl(deps: LoginDeps): Promise<string> {
  const given = deps.settings.url ?? deps.env.REPOADMIN_URL;
  const current = await deps.config.current();
  return normalizeUrl(
    await valueOrAsk(deps, {
      value: given ?? (canPrompt(deps) ? undefined : current?.url),
      question: 'Server:',
      supply: '--url or REPOADMIN_URL',
      default: current?.url ?? DEFAULT_SERVER,
    }),
    given ? '--url' : 'server',
    deps.settings.verbose ? (line) => deps.io.err(`verbose: ${line}`) : undefined,
  );
}

export async function runLogin(opts: LoginOptions, deps: LoginDeps): Promise<Report> {
  if (opts.withToken) return loginWithToken(deps);
  const url = await loginUrl(deps);
  const stored = await deps.config.get(url);
  const username = await valueOrAsk(deps, {
    value: opts.username ?? deps.env.REPOADMIN_USERNAME,
    question: 'User name:',
    supply: '--username or REPOADMIN_USERNAME',
    default: stored?.username,
  });
  const password = await loginPassword(opts, deps, username);
  const answer = await deps.api.generateToken({ username, password }, url);
  await deps.config.save({
    url,
    username: answer.username,
    userId: answer.userId,
    token: answer.token,
    expiresAt: answer.expiresAt,
    projectName: answer.projectName,
    role: answer.role,
  });

  const project = answer.projectName ? `, project ${answer.projectName}` : '';
  const notes = [`Logged in to ${url} as ${answer.username} (${answer.role}${project}); the token is valid until ${answer.expiresAt}.`];
  if (answer.mustChangePassword) {
    notes.push(`The password of ${answer.username} must be changed before anything else works: run ${cliInvocation(deps.env, process.argv[1] ?? 'repoadmin', process.cwd())} user passwd`);
  }
  return { json: { url, username: answer.username }, notes };
}

/** Stores a token from standard input once the server has said whose it is. */
async function loginWithToken(deps: LoginDeps): Promise<Report> {
  const token = (await deps.io.readStdin()).trim();
  if (!token) throw new AppError('usage', '--with-token: standard input was empty (printf %s "$TOKEN" | repoadmin login --with-token)');
  if (/\s/.test(token)) throw new AppError('usage', '--with-token: standard input holds more than one word; give the token alone');
  const url = await loginUrl(deps);
  const me = await deps.api.meWithToken(token, url);
  const exp = isProjectToken(token) ? undefined : tokenClaims(token).exp;
  const expiresAt = typeof exp === 'number' ? new Date(exp * 1000).toISOString() : null;
  await deps.config.save({ url, username: me.username, userId: me.userId, token, expiresAt, projectName: me.projectName, role: me.role });
  const kind = isProjectToken(token) ? 'a project token' : 'a session token';
  const project = me.projectName ? `, project ${me.projectName}` : '';
  return {
    json: { url, username: me.username },
    notes: [`Logged in to ${url} as ${me.username} (${me.role}${project}) with ${kind}${expiresAt ? ` valid until ${expiresAt}` : ''}.`],
  };
}

async function loginPassword(opts: LoginOptions, deps: Pick<Deps, 'io' | 'env' | 'prompter'>, username: string): Promise<string> {
  if (opts.passwordStdin) return passwordFromStdin(deps);
  if (deps.env.REPOADMIN_PASSWORD) return deps.env.REPOADMIN_PASSWORD;
  if (!canPrompt(deps)) throw new AppError('usage', 'missing the password: pass it on standard input with --password-stdin, or set REPOADMIN_PASSWORD');
  const password = await deps.prompter.password(`Password for ${username}:`);
  if (!password) throw new AppError('usage', 'the password must not be empty');
  return password;
}
