// Trusted publishing (docs/api.md, "Trusted publishing"): the publishers a project trusts
// (administrators), the audience ID tokens must name, and the exchange of an ID token for a
// short-lived project token.
import {
  OidcAudience,
  OidcExchangeRequest,
  OidcExchanged,
  TrustedPublisher,
  TrustedPublisherCreateRequest,
  TrustedPublisherIdParams,
  TrustedPublisherList,
  TrustedPublisherListQuery,
  TrustedPublisherUpdateRequest,
} from '../../../common/schemas/trust.js';
import { endpoint } from '../../http/endpoint.js';
import { exchangeIdToken } from '../../services/oidc.js';
import { changePublisher, createPublisher, getPublisher, listTrustedPublishers, removePublisher } from '../../services/trust.js';

const ADMIN = { role: 'ROLE_ADMIN', purpose: 'manage trusted publishers' } as const;
const missing = { 404: { description: 'No such trusted publisher' } };
const details = (p: TrustedPublisher) => ({ id: p.id, projectName: p.projectName, provider: p.provider, issuer: p.issuer });

export const trustEndpoints = [
  endpoint({
    method: 'POST',
    path: '/v1/trusted-publishers',
    summary: "Trust a pipeline's ID tokens to publish to a project",
    description:
      '`claims` must pin the repository or job: github `repository_id` or `repository`, gitlab `project_id` or `project_path`, jenkins and generic `sub`. ' +
      'The issuer must be https, and neither loopback, link-local, unspecified nor multicast, unless --repoadmin_oidc_allow_networks names its network.',
    tags: ['trusted publishing'],
    access: ADMIN,
    body: TrustedPublisherCreateRequest,
    responses: {
      201: { description: 'Made', schema: TrustedPublisher },
      400: { description: 'Invalid: nothing pinned, an issuer the server may not use, a private key in jwks' },
      },
    audit: { action: 'trusted_publisher.created', target: (req) => req.body.projectName },
    handler: async (req, services) => {
      const made = await createPublisher(services, req.body);
      return { status: 201, body: made, audit: { target: made.id, details: details(made) } };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/v1/trusted-publishers',
    summary: "The trusted publishers, or one project's",
    tags: ['trusted publishing'],
    access: ADMIN,
    query: TrustedPublisherListQuery,
    responses: { 200: { description: 'By project, then creation', schema: TrustedPublisherList }, 400: { description: 'Invalid query' } },
    handler: async (req, services) => ({ body: { publishers: await listTrustedPublishers(services, req.query.projectName) } }),
  }),
  endpoint({
    method: 'GET',
    path: '/v1/trusted-publishers/{id}',
    summary: 'One trusted publisher',
    tags: ['trusted publishing'],
    access: ADMIN,
    params: TrustedPublisherIdParams,
    responses: { 200: { description: 'The publisher', schema: TrustedPublisher }, 400: { description: 'Not a UUID' }, ...missing },
    handler: async (req, services) => ({ body: await getPublisher(services, req.params.id) }),
  }),
  endpoint({
    method: 'PATCH',
    path: '/v1/trusted-publishers/{id}',
    summary: 'Change a trusted publisher (the fields given); tokens it made keep working until they expire',
    tags: ['trusted publishing'],
    access: ADMIN,
    params: TrustedPublisherIdParams,
    body: TrustedPublisherUpdateRequest,
    responses: { 200: { description: 'Changed', schema: TrustedPublisher }, 400: { description: 'Invalid, as for POST' }, ...missing },
    audit: { action: 'trusted_publisher.changed', target: (req) => req.params.id },
    handler: async (req, services) => {
      const changed = await changePublisher(services, req.params.id, req.body);
      return { body: changed, audit: { details: { ...details(changed), fields: Object.keys(req.body) } } };
    },
  }),
  endpoint({
    method: 'DELETE',
    path: '/v1/trusted-publishers/{id}',
    summary: 'Remove a trusted publisher, revoking the tokens it made',
    tags: ['trusted publishing'],
    access: ADMIN,
    params: TrustedPublisherIdParams,
    responses: { 204: { description: 'Removed' }, 400: { description: 'Not a UUID' }, ...missing },
    audit: { action: 'trusted_publisher.deleted', target: (req) => req.params.id },
    handler: async (req, services) => {
      const { publisher, revoked } = await removePublisher(services, req.params.id);
      return { status: 204, audit: { details: { ...details(publisher), revoked } } };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/v1/authentication/oidc/audience',
    summary: 'The audience (aud) ID tokens are requested for, unless a publisher names its own',
    tags: ['authentication'],
    access: 'public',
    responses: { 200: { description: 'The audience', schema: OidcAudience } },
    handler: (_req, services) => ({ body: { audience: services.config.oidc.audience } }),
  }),
  endpoint({
    method: 'POST',
    path: '/v1/authentication/oidc',
    summary: "Exchange a pipeline's OpenID Connect ID token for a short-lived project token",
    description:
      'The ID token is verified completely (signature by a key of its issuer, RS256/RS384/RS512/PS256/ES256/ES384 only, aud, exp, iat and nbf at most 60 s ahead, ' +
      'a lifetime of at most 1 hour, accepted once, at most 16 KiB), then matched against the trusted publishers. The project token is valid ' +
      '--repoadmin_oidc_token_minutes (15 by default), scope publish, bound to the project and to the branch of the ID token\'s ref.',
    tags: ['authentication'],
    access: 'public',
    body: OidcExchangeRequest,
    responses: {
      200: { description: 'The project token; shown only here', schema: OidcExchanged },
      400: { description: 'Invalid request' },
      401: { description: 'The ID token does not verify; the message names what failed' },
      403: { description: 'No trusted publisher matches; the message names, for the closest, each claim that differed' },
      409: { description: 'Publishers of several projects match: name one in projectName' },
      503: { description: 'The issuer cannot be reached, or answers garbage; see Retry-After' },
    },
    audit: { action: 'token.exchanged', target: (req) => req.body.projectName },
    handler: async (req, services) => {
      const { answer, audit } = await exchangeIdToken(services, req.body);
      return { body: answer, audit: { target: answer.projectName, details: { ...audit, tokenId: answer.tokenId, branch: answer.branch } } };
    },
  }),
];
