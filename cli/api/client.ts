// The typed registry API (docs/api.md) at the server this run talks to, with the credentials of
// docs/cli.md.
import { AppError } from '../../common/errors.js';
import type { TokenRequest, TokenResponse } from '../../common/schemas/auth.js';
import type { PageRequest, PublishResult, SearchRequest, SearchResult, SortField, VersionInformation, VersionRecordBody } from '../../common/schemas/repositories.js';
import type { RetentionPolicy, RetentionPolicyList, RetentionRunResult } from '../../common/schemas/retention.js';
import type { ProjectTokenCreated, ProjectTokenList, ProjectTokensRevoked } from '../../common/schemas/tokens.js';
import type { TrashPage } from '../../common/schemas/trash.js';
import type {
  OidcAudience,
  OidcExchanged,
  OidcExchangeRequest,
  TrustedPublisher,
  TrustedPublisherCreateRequest,
  TrustedPublisherList,
  TrustedPublisherUpdateRequest,
} from '../../common/schemas/trust.js';
import type { Me, UserCreateRequest, UserList, UserResult } from '../../common/schemas/users.js';
import type { AuditPage } from '../../common/schemas/audit.js';
import type { EventPage } from '../../common/schemas/events.js';
import type { EnvironmentList, EnvironmentSpec, Promotion, PromotionPage, PromotionRequest } from '../../common/schemas/environments.js';
import type {
  DeliveryList,
  PingResult,
  SecretRotated,
  WebhookCreateRequest,
  WebhookCreated,
  WebhookList,
} from '../../common/schemas/webhooks.js';
import { createHttp, DEFAULT_TIMEOUT_MS, type Http, type HttpRequest, POSITION_HEADER } from '../http.js';
import { requestGithubIdToken } from './id-token.js';
import { resolveCredentials, resolveUrl, storedToken, whyRejected, type Credentials, type CredentialsHint, type SessionContext } from './session.js';

export type { Credentials } from './session.js';

/**
 * A page request as the client sends it: what is left out is the server's default, and a sort
 * field the server does not know is the server's to refuse.
 */
export type PageRequestParams = Partial<Omit<PageRequest, 'sortField'>> & { sortField?: SortField | string };

export interface Api {
  /** The server this run talks to: --url, else REPOADMIN_URL, else the current login's. */
  serverUrl(): Promise<string>;
  /**
   * The token to send and where it came from; logs in on the fly with REPOADMIN_USERNAME/PASSWORD, or
   * exchanges the CI's ID token (REPOADMIN_ID_TOKEN, GitHub Actions) when nothing else is given.
   */
  credentials(): Promise<Credentials>;
  /** `POST /v1/authentication/generate-token`, at `url` when given (login), else at serverUrl(). */
  generateToken(body: TokenRequest, url?: string): Promise<TokenResponse>;
  /** `GET /v1/users/me`; refused without a request for a token made from an ID token, which has no user. */
  me(): Promise<Me>;
  /**
   * The project of the token's user (null for an administrator): known from the login, on the fly
   * or stored, else asked once (`GET /v1/users/me`) and kept with a stored login for next time.
   */
  projectName(): Promise<string | null>;
  /** `GET /v1/users/me` with this token at this server, before it is stored (`login --with-token`). */
  meWithToken(token: string, url: string): Promise<Me>;
  listUsers(): Promise<UserList>;
  createUser(body: UserCreateRequest): Promise<UserResult>;
  changePassword(userId: string, password: string): Promise<UserResult>;
  deleteUser(userId: string): Promise<void>;
  publish(record: VersionRecordBody): Promise<PublishResult>;
  search(filters: SearchRequest, paging?: PageRequestParams): Promise<SearchResult>;
  /**
   * `POST /v1/tokens`; `expiresAt` as ISO 8601, or null for none; `password`, the caller's own, when
   * the session is not a fresh login (needsFreshLogin).
   */
  createToken(body: { name: string; scope: string; expiresAt: string | null; userId?: string; password?: string }): Promise<ProjectTokenCreated>;
  /** One page of `GET /v1/tokens`: the caller's, one user's, or (administrators) everyone's. */
  listTokens(query: { userId?: string; page?: number; size?: number }): Promise<ProjectTokenList>;
  revokeToken(id: string): Promise<void>;
  /** Revokes every project token of the user. */
  revokeAllTokens(userId: string): Promise<ProjectTokensRevoked>;
  createWebhook(body: WebhookCreateRequest): Promise<WebhookCreated>;
  listWebhooks(): Promise<WebhookList>;
  deleteWebhook(id: string): Promise<void>;
  pingWebhook(id: string): Promise<PingResult>;
  webhookDeliveries(id: string, query: { status?: string; page?: number; size?: number }): Promise<DeliveryList>;
  redeliver(id: string, deliveryId: string): Promise<void>;
  rotateWebhookSecret(id: string): Promise<SecretRotated>;
  /** `GET /v1/events`; with `wait`, the server holds the request until an event arrives. */
  events(query: { after?: string; limit?: number; wait?: number; type?: string[] }): Promise<EventPage>;
  audit(query: { actor?: string; action?: string; since?: string; page?: number; size?: number }): Promise<AuditPage>;
  /** `DELETE /v1/repositories/{uid}`: into the trash. */
  deleteVersion(uid: string, force: boolean): Promise<void>;
  listTrash(query: { projectName?: string; page?: number; size?: number }): Promise<TrashPage>;
  restoreVersion(uid: string): Promise<VersionInformation>;
  createPolicy(body: Record<string, unknown>): Promise<RetentionPolicy>;
  listPolicies(): Promise<RetentionPolicyList>;
  changePolicy(id: string, body: Record<string, unknown>): Promise<RetentionPolicy>;
  removePolicy(id: string): Promise<void>;
  runPolicy(id: string, dryRun: boolean): Promise<RetentionRunResult>;
  /** `POST /v1/trusted-publishers` (administrators). */
  createTrustedPublisher(body: TrustedPublisherCreateRequest): Promise<TrustedPublisher>;
  /** `GET /v1/trusted-publishers`: every project's, or one project's. */
  listTrustedPublishers(query: { projectName?: string }): Promise<TrustedPublisherList>;
  getTrustedPublisher(id: string): Promise<TrustedPublisher>;
  changeTrustedPublisher(id: string, body: TrustedPublisherUpdateRequest): Promise<TrustedPublisher>;
  /** `DELETE /v1/trusted-publishers/{id}`: the tokens it made are revoked with it. */
  removeTrustedPublisher(id: string): Promise<void>;
  /** `GET /v1/authentication/oidc/audience`: what a CI's ID token is requested for. No token sent. */
  oidcAudience(): Promise<OidcAudience>;
  /** `POST /v1/authentication/oidc`: an ID token for a short-lived project token. No token sent. */
  exchangeIdToken(body: OidcExchangeRequest): Promise<OidcExchanged>;
  /** `PUT /v1/projects/{projectName}/environments`: the project's environments, in order, with their gates. */
  setEnvironments(projectName: string, environments: EnvironmentSpec[]): Promise<EnvironmentList>;
  /** `GET /v1/projects/{projectName}/environments`, each with its current versions. */
  environments(projectName: string): Promise<EnvironmentList>;
  /**
   * `POST /v1/promotions`. `promoted` is false when the version was current there already (the
   * server answers 200 and records nothing, else 201).
   */
  promote(body: PromotionRequest): Promise<{ promotion: Promotion; promoted: boolean }>;
  /** One page of `GET /v1/promotions`, newest first. */
  promotions(query: { projectName?: string; groupId?: string; artifactId?: string; environment?: string; page?: number; size?: number }): Promise<PromotionPage>;
  /** The record with its `veto`. */
  veto(uid: string, reason: string): Promise<VersionInformation>;
  /** The record without its veto (a server may answer 204, then undefined). */
  liftVeto(uid: string): Promise<VersionInformation | undefined>;
}

export interface ApiContext extends SessionContext {
  /** For tests: the first backoff delay. */
  retryDelayMs?: number;
}

/** The longest timeout a timer can wait (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** REPOADMIN_TIMEOUT in milliseconds: seconds, a fraction allowed; unset or empty is the default. */
export function timeoutFrom(env: NodeJS.ProcessEnv): number {
  const given = env.REPOADMIN_TIMEOUT?.trim();
  if (!given) return DEFAULT_TIMEOUT_MS;
  const ms = /^\d+(\.\d+)?$/.test(given) ? Math.round(Number(given) * 1000) : Number.NaN;
  if (!(ms >= 1 && ms <= MAX_TIMEOUT_MS)) {
    throw new AppError('usage', `REPOADMIN_TIMEOUT must be a number of seconds from 0.001 to ${Math.floor(MAX_TIMEOUT_MS / 1000)}, not "${given}"`);
  }
  return ms;
}

export function createApi(context: ApiContext): Api {
  const clients = new Map<string, Http>();
  const http = (baseUrl: string): Http => {
    let client = clients.get(baseUrl);
    if (!client) {
      client = createHttp({ baseUrl, timeoutMs: timeoutFrom(context.env), log: context.log, retryDelayMs: context.retryDelayMs });
      clients.set(baseUrl, client);
    }
    return client;
  };

  let url: Promise<string> | undefined;
  const serverUrl = () => (url ??= resolveUrl(context));
  const oidcAudience = async () =>
    http(await serverUrl())<OidcAudience>({ method: 'GET', path: 'v1/authentication/oidc/audience', idempotent: true, notFoundMeansWrongServer: true });
  // Not sent again: an ID token is accepted once, and a retry after a lost answer would be refused as a replay.
  const exchangeIdToken = async (body: OidcExchangeRequest) =>
    http(await serverUrl())<OidcExchanged>({ method: 'POST', path: 'v1/authentication/oidc', json: body, notFoundMeansWrongServer: true });
  const generateToken = async (body: TokenRequest, at?: string) =>
    http(at ?? (await serverUrl()))<TokenResponse>({
      method: 'POST',
      path: 'v1/authentication/generate-token',
      json: body,
      notFoundMeansWrongServer: true,
    });

  /** The token of this run, chosen once; the first call that needs one may name its project (a publish's). */
  let credentials: Promise<Credentials> | undefined;
  const getCredentials = (hint?: CredentialsHint) =>
    (credentials ??= serverUrl().then((server) =>
      resolveCredentials(
        context,
        server,
        {
          login: (body) => generateToken(body, server),
          audience: async () => (await oidcAudience()).audience,
          exchange: exchangeIdToken,
          githubIdToken: (source, audience) => requestGithubIdToken(source, audience, { timeoutMs: timeoutFrom(context.env), log: context.log }),
        },
        hint,
      ),
    ));

  /**
   * Read-your-writes (docs/cli.md): a write's answer gives the server's position, kept for a minute;
   * reads send it back, so that a server reading from a replica answers with the write in it.
   */
  const keepPosition = (server: string) => async (headers: Headers) => {
    const position = headers.get(POSITION_HEADER);
    if (!position) return;
    try {
      await context.config.keepPosition(server, position);
    } catch (error) {
      // The write went through; a config folder that cannot be written only costs read-your-writes.
      context.log?.(`could not keep the write's position (${error instanceof Error ? error.message : String(error)})`);
    }
  };
  const positionHeaders = async (server: string): Promise<Record<string, string> | undefined> => {
    const position = await context.config.position(server).catch(() => undefined);
    return position ? { [POSITION_HEADER]: position } : undefined;
  };
  const withPosition = async (server: string, request: HttpRequest): Promise<HttpRequest> =>
    request.method === 'GET' || request.reads ? { ...request, headers: await positionHeaders(server) } : { ...request, onHeaders: keepPosition(server) };

  /** A call that needs a token. */
  const authenticated = async <T>(request: HttpRequest, hint?: CredentialsHint): Promise<T> => {
    const server = await serverUrl();
    const creds = await getCredentials(hint);
    try {
      return await http(server)<T>({ ...(await withPosition(server, request)), token: creds.token });
    } catch (error) {
      throw whyRejected(error, creds, server);
    }
  };

  /** A public call: sends a token when one is at hand, logs in only when the server asks for one. */
  const publicCall = async <T>(request: HttpRequest): Promise<T> => {
    const server = await serverUrl();
    const token = await storedToken(context, server);
    try {
      return await http(server)<T>({ ...(await withPosition(server, request)), token });
    } catch (error) {
      if ((error as { code?: string }).code !== 'unauthorized') throw error;
      if (!token) return authenticated(request);
      // Says where the refused token came from and what to do, as for any other call.
      throw whyRejected(error, await getCredentials(), server);
    }
  };

  const me = async () => {
    const creds = await getCredentials();
    // A token made from an ID token belongs to a project and a pipeline, not to a user.
    if (creds.source === 'oidc') {
      throw new AppError('forbidden', `this run's token was made from the CI's ID token for project ${creds.projectName} and belongs to no user`);
    }
    return authenticated<Me>({ method: 'GET', path: 'v1/users/me', idempotent: true, notFoundMeansWrongServer: true });
  };

  const projectName = async (): Promise<string | null> => {
    const creds = await getCredentials();
    if (creds.projectName !== undefined) return creds.projectName;
    // A token from --token or the environment says nothing of its project, nor did a login stored
    // before the project was kept.
    const user = await me();
    if (creds.source === 'config') {
      try {
        await context.config.complete(await serverUrl(), creds.token, { projectName: user.projectName, role: user.role });
      } catch (error) {
        // The answer is at hand: a config file that cannot be written costs a request next time, not this run.
        context.log?.(`could not keep the project in the stored login (${error instanceof Error ? error.message : String(error)})`);
      }
    }
    return user.projectName;
  };

  return {
    serverUrl,
    credentials: getCredentials,
    generateToken,
    me,
    projectName,
    meWithToken: (token, at) => http(at)({ method: 'GET', path: 'v1/users/me', token, idempotent: true, notFoundMeansWrongServer: true }),
    listUsers: () => authenticated({ method: 'GET', path: 'v1/users', idempotent: true, notFoundMeansWrongServer: true }),
    createUser: (body) => authenticated({ method: 'POST', path: 'v1/users', json: body, notFoundMeansWrongServer: true }),
    changePassword: (userId, password) =>
      authenticated({ method: 'PUT', path: `v1/users/${encodeURIComponent(userId)}/password`, json: { password } }),
    deleteUser: (userId) => authenticated({ method: 'DELETE', path: `v1/users/${encodeURIComponent(userId)}` }),
    // Idempotent by its coordinates (docs/api.md, "Version records"): a retry replaces the record with the same body.
    publish: (record) =>
      authenticated(
        { method: 'POST', path: 'v1/repositories', json: record, idempotent: true, notFoundMeansWrongServer: true },
        { projectName: record.projectName },
      ),
    search: (filters, paging = {}) =>
      publicCall({
        method: 'POST',
        path: 'v1/repositories/search',
        json: filters,
        searchParams: { ...paging },
        idempotent: true,
        reads: true,
        // A search finding nothing answers 200 with an empty list, never 404.
        notFoundMeansWrongServer: true,
      }),
    createToken: (body) => authenticated({ method: 'POST', path: 'v1/tokens', json: body }),
    listTokens: (query) => authenticated({ method: 'GET', path: 'v1/tokens', searchParams: query, idempotent: true }),
    revokeToken: (id) => authenticated({ method: 'DELETE', path: `v1/tokens/${encodeURIComponent(id)}` }),
    revokeAllTokens: (userId) => authenticated({ method: 'DELETE', path: 'v1/tokens', searchParams: { userId } }),
    createWebhook: (body) => authenticated({ method: 'POST', path: 'v1/webhooks', json: body }),
    listWebhooks: () => authenticated({ method: 'GET', path: 'v1/webhooks', idempotent: true }),
    deleteWebhook: (id) => authenticated({ method: 'DELETE', path: `v1/webhooks/${encodeURIComponent(id)}` }),
    pingWebhook: (id) => authenticated({ method: 'POST', path: `v1/webhooks/${encodeURIComponent(id)}/ping` }),
    webhookDeliveries: (id, query) =>
      authenticated({ method: 'GET', path: `v1/webhooks/${encodeURIComponent(id)}/deliveries`, searchParams: query, idempotent: true }),
    redeliver: (id, deliveryId) =>
      authenticated({ method: 'POST', path: `v1/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver` }),
    rotateWebhookSecret: (id) => authenticated({ method: 'POST', path: `v1/webhooks/${encodeURIComponent(id)}/rotate-secret` }),
    events: (query) =>
      authenticated({ method: 'GET', path: 'v1/events', searchParams: { ...query, type: query.type?.join(',') || undefined }, idempotent: true }),
    audit: (query) => authenticated({ method: 'GET', path: 'v1/audit', searchParams: query, idempotent: true }),
    deleteVersion: (uid, force) =>
      authenticated({ method: 'DELETE', path: `v1/repositories/${encodeURIComponent(uid)}`, searchParams: { force: force ? 'true' : undefined } }),
    listTrash: (query) => authenticated({ method: 'GET', path: 'v1/trash', searchParams: query, idempotent: true }),
    restoreVersion: (uid) => authenticated({ method: 'POST', path: `v1/trash/${encodeURIComponent(uid)}/restore` }),
    createPolicy: (body) => authenticated({ method: 'POST', path: 'v1/retention/policies', json: body }),
    listPolicies: () => authenticated({ method: 'GET', path: 'v1/retention/policies', idempotent: true }),
    changePolicy: (id, body) => authenticated({ method: 'PATCH', path: `v1/retention/policies/${encodeURIComponent(id)}`, json: body }),
    removePolicy: (id) => authenticated({ method: 'DELETE', path: `v1/retention/policies/${encodeURIComponent(id)}` }),
    runPolicy: (id, dryRun) =>
      authenticated({ method: 'POST', path: `v1/retention/policies/${encodeURIComponent(id)}/run`, searchParams: { dryRun: String(dryRun) } }),
    createTrustedPublisher: (body) => authenticated({ method: 'POST', path: 'v1/trusted-publishers', json: body, notFoundMeansWrongServer: true }),
    listTrustedPublishers: (query) =>
      authenticated({ method: 'GET', path: 'v1/trusted-publishers', searchParams: query, idempotent: true, notFoundMeansWrongServer: true }),
    getTrustedPublisher: (id) => authenticated({ method: 'GET', path: `v1/trusted-publishers/${encodeURIComponent(id)}`, idempotent: true }),
    changeTrustedPublisher: (id, body) => authenticated({ method: 'PATCH', path: `v1/trusted-publishers/${encodeURIComponent(id)}`, json: body }),
    removeTrustedPublisher: (id) => authenticated({ method: 'DELETE', path: `v1/trusted-publishers/${encodeURIComponent(id)}` }),
    oidcAudience,
    exchangeIdToken,
    setEnvironments: (projectName, environments) =>
      authenticated({ method: 'PUT', path: `v1/projects/${encodeURIComponent(projectName)}/environments`, json: { environments } }),
    environments: (projectName) =>
      authenticated({ method: 'GET', path: `v1/projects/${encodeURIComponent(projectName)}/environments`, idempotent: true }),
    promote: async (body) => {
      let status = 0;
      // Idempotent by its outcome (docs/api.md): sent again, it answers 200 with the promotion that made the version current.
      const promotion = await authenticated<Promotion>({ method: 'POST', path: 'v1/promotions', json: body, idempotent: true, onStatus: (s) => (status = s) });
      return { promotion, promoted: status !== 200 };
    },
    promotions: (query) => authenticated({ method: 'GET', path: 'v1/promotions', searchParams: query, idempotent: true }),
    veto: (uid, reason) => authenticated({ method: 'PUT', path: `v1/repositories/${encodeURIComponent(uid)}/veto`, json: { reason } }),
    liftVeto: (uid) => authenticated({ method: 'DELETE', path: `v1/repositories/${encodeURIComponent(uid)}/veto` }),
  };
}
