// `repoadmin token create`: makes a project token and prints only the token, for `TOKEN=$(...)`.
import { Command } from 'commander';
import { AppError, needsFreshLogin } from '../../../common/errors.js';
import { parseCreationDate } from '../../../common/dates.js';
import { ProjectTokenCreateRequest, TOKEN_SCOPES, type TokenScope } from '../../../common/schemas/tokens.js';
import { canPrompt, noPromptReason, type Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, checkRequest, example, passwordFromStdin, wholeNumber, withFlagNames } from '../support.js';
import { tokenOwner } from './owner.js';

export interface TokenCreateOptions {
  name: string;
  scope: TokenScope;
  user?: string;
  /** `--expires`, as typed. */
  expires?: string;
  expiresInDays?: number;
  /** Read the caller's password from standard input, should the server ask for a fresh login. */
  passwordStdin: boolean;
}

const DAY_MS = 24 * 3600 * 1000;
const MAX_DAYS = 3653;

export function tokenCreateCommand(deps: Deps, run = runTokenCreate): Command {
  return new Command('create')
    .summary('make a project token for a pipeline (prints only the token)')
    .description(
      "Make a long-lived project token for a build server's secret store. Only the\n" +
        'token goes to standard output, once: the server keeps a hash and cannot show\n' +
        "it again. Scopes: publish (search, and publish to the user's project; the\n" +
        'default), read (search only), delete (publish, and delete records of the\n' +
        "user's project) or promote (search, and promote and veto versions of the\n" +
        "user's project; no other scope includes it). Administrators make tokens\n" +
        'for any user with --user; the token acts as that user. It needs a fresh\n' +
        'login: a login of the last 15 minutes, else your password (asked on a\n' +
        'terminal, or --password-stdin).',
    )
    .usage('--name NAME [--scope SCOPE] [options]')
    .requiredOption('--name <name>', 'a name unique for the user, e.g. the pipeline')
    .option('--scope <scope>', 'publish, read, delete (which includes publish) or promote', 'publish')
    .option('--user <username>', 'the token\'s user (administrators; default: yourself)')
    .option('--expires <date>', 'expiry: a date (2027-06-30, midnight UTC) or a date-time with an offset')
    .option('--expires-in-days <n>', `expiry in N days (1 to ${MAX_DAYS})`)
    .option('--password-stdin', 'your password from standard input, sent if your login is older than 15 minutes')
    .addHelpText(
      'after',
      example(
        'TOKEN=$(repoadmin token create --name ci --user shop-ci)',
        'repoadmin token create --name dashboard --scope read --expires-in-days 90',
        'printf %s "$PASSWORD" |\n    repoadmin token create --name ci --user shop-ci --password-stdin',
      ),
    )
    .action(
      action<{ name: string; scope: string; user?: string; expires?: string; expiresInDays?: string; passwordStdin?: boolean }, TokenCreateOptions>(
        deps,
        (flags) => {
          if (!(TOKEN_SCOPES as readonly string[]).includes(flags.scope)) {
            throw new AppError('usage', `--scope must be one of ${TOKEN_SCOPES.join(', ')}, not "${flags.scope}"`);
          }
          if (flags.expires !== undefined && flags.expiresInDays !== undefined) {
            throw new AppError('usage', 'give --expires or --expires-in-days, not both');
          }
          return {
            name: flags.name,
            scope: flags.scope as TokenScope,
            user: flags.user,
            expires: flags.expires,
            expiresInDays: wholeNumber(flags.expiresInDays, '--expires-in-days', 1, MAX_DAYS),
            passwordStdin: Boolean(flags.passwordStdin),
          };
        },
        run,
      ),
    );
}

/** The request's fields by the flags that set them. */
const FLAGS = { name: '--name', scope: '--scope', expiresAt: '--expires', userId: '--user' };

/** The expiry to send: null for none. */
export function expiryOf(opts: Pick<TokenCreateOptions, 'expires' | 'expiresInDays'>, now: Date): string | null {
  if (opts.expiresInDays !== undefined) return new Date(now.getTime() + opts.expiresInDays * DAY_MS).toISOString();
  if (opts.expires === undefined) return null;
  const text = /^\d{4}-\d{2}-\d{2}$/.test(opts.expires) ? `${opts.expires}T00:00:00Z` : opts.expires;
  const date = parseCreationDate(text);
  if (!date) {
    throw new AppError('usage', `--expires must be a date (2027-06-30) or a date-time with an offset (2027-06-30T12:00:00+02:00), not "${opts.expires}"`);
  }
  return date.toISOString();
}

/**
 * The caller's password, once the server has said the login is not fresh: from standard input with
 * --password-stdin, else asked on a terminal; elsewhere a 401 (exit 4) that says how to give it.
 */
async function freshLoginPassword(opts: TokenCreateOptions, deps: Pick<Deps, 'io' | 'env' | 'prompter'>, caller: string, refusal: AppError): Promise<string> {
  if (opts.passwordStdin) return passwordFromStdin(deps);
  if (!canPrompt(deps)) {
    throw new AppError(
      'unauthorized',
      `${refusal.message}. Pass the password of ${caller} on standard input with --password-stdin, or run repoadmin login first (${noPromptReason(deps)})`,
      { reason: refusal.details.reason },
    );
  }
  const password = await deps.prompter.password(`Your login is not fresh enough to make a project token: password of ${caller}:`);
  if (!password) throw new AppError('usage', 'the password must not be empty');
  return password;
}

export async function runTokenCreate(opts: TokenCreateOptions, deps: Pick<Deps, 'api' | 'now' | 'io' | 'env' | 'prompter'>): Promise<Report> {
  const expiresAt = expiryOf(opts, deps.now());
  checkRequest(ProjectTokenCreateRequest, { name: opts.name, scope: opts.scope }, FLAGS);
  const owner = await tokenOwner(deps, opts.user);
  const request = { name: opts.name, scope: opts.scope, expiresAt, userId: owner.userId };
  let made;
  try {
    try {
      made = await deps.api.createToken(request);
    } catch (error) {
      // A session older than 15 minutes: once more, with the password (a wrong one is not asked again).
      if (!needsFreshLogin(error)) throw error;
      const password = await freshLoginPassword(opts, deps, owner.caller, error as AppError);
      made = await deps.api.createToken({ ...request, password });
    }
  } catch (error) {
    throw withFlagNames(error, FLAGS);
  }
  const project = made.projectName ? `, project ${made.projectName}` : '';
  return {
    json: made,
    lines: [made.token],
    notes: [
      `Made the ${made.scope} token "${made.name}" of ${made.username}${project}, ${made.expiresAt ? `valid until ${made.expiresAt}` : 'without expiry'}.`,
      'It is shown only now: keep it in your build server\'s secret store (e.g. as REPOADMIN_TOKEN).',
    ],
  };
}
