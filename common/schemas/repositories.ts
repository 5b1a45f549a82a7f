// Version records: what a pipeline publishes, how it is searched, what comes back.
import * as z from 'zod';
import { CREATION_YEAR_MAX, CREATION_YEAR_MIN } from '../dates.js';
import { LooseBoolean, NO_NUL, NO_NUL_MESSAGE, PageInfo, Timestamp, Uuid, offsetDateTime, text } from './common.js';
import { PROJECT_NAME_MAX } from './users.js';

export const BRANCH_MAX = 255;
export const COORDINATE_MAX = 100;
export const REPOSITORY_URL_MAX = 512;
export const TYPE_MAX = 255;
export const DESCRIPTION_MAX_BYTES = 64 * 1024;
export const DEFAULT_TYPE = 'LIBRARY';
export const PAGE_SIZE_DEFAULT = 10;
export const PAGE_SIZE_MAX = 100;
/** A search filter value longer than this cannot match anything we store. */
export const FILTER_MAX = 512;
/** An environment's name (docs/api.md, "Environments and promotion"): `prod`, `staging-eu`. */
export const ENVIRONMENT_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;
export const EnvironmentName = z
  .string()
  .regex(ENVIRONMENT_NAME, 'must be 1 to 32 lower-case letters, digits and hyphens, starting with a letter or digit')
  .meta({ example: 'prod' });
/** The longest reason a veto may give. */
export const VETO_REASON_MAX = 500;

/** An http(s), ssh or git address, or an scp-style one such as `git@host:org/repo.git`. */
const REPOSITORY_URL = /^(?:(?:https?|ssh|git\+ssh|git):\/\/[^\s/?#]+[^\s]*|(?:[A-Za-z0-9._~-]+@)?[A-Za-z0-9.-]+:(?!\/\/)[^\s]+)$/;

/** Control characters (C0, DEL, C1; NUL has its own message): a coordinate with one cannot be typed, shown or matched as written. */
// eslint-disable-next-line no-control-regex -- finds control characters, on purpose
const CONTROL = /[\u0001-\u001f\u007f-\u009f]/;

const CONTROL_MESSAGE = 'must not contain control characters (tab, line break, escape and the like)';

/** White space of any kind (Unicode's too: no-break space, the line separator): none is typed on purpose in a coordinate. */
const WHITE_SPACE = /\s/;

/** A record's type: text without control characters. */
const label = (max: number) => text(max).refine((s) => !CONTROL.test(s), CONTROL_MESSAGE);

/**
 * A coordinate (project, branch, group, artifact, version): text without control characters or white
 * space, so that it is typed, shown and matched as written (a Maven coordinate or a git branch has
 * none). One message per value: a tab is named a control character. Only what is written is
 * checked: records stored before the rule stay readable and searchable.
 */
const coordinate = (max: number) =>
  text(max).superRefine((s, ctx) => {
    if (CONTROL.test(s)) ctx.addIssue({ code: 'custom', message: CONTROL_MESSAGE, input: s });
    else if (WHITE_SPACE.test(s)) ctx.addIssue({ code: 'custom', message: 'must not contain white space', input: s });
  });

const absentWhenEmpty = (v: unknown) => (v === '' || v === null ? undefined : v);

export const RepositoryUrl = z
  .string()
  .max(REPOSITORY_URL_MAX, `at most ${REPOSITORY_URL_MAX} characters`)
  .regex(NO_NUL, NO_NUL_MESSAGE)
  .regex(REPOSITORY_URL, 'must be an http(s), ssh or scp-style git address');

const CreationDateText = offsetDateTime(
  'must be an ISO 8601 date-time with an offset, e.g. 2019-03-02T20:30:35.420+0000',
).meta({ example: '2019-03-02T20:30:35.420+0000' });

const MILLIS_MIN = Date.UTC(CREATION_YEAR_MIN, 0, 1);
const MILLIS_MAX = Date.UTC(CREATION_YEAR_MAX + 1, 0, 1) - 1;
/** Epoch milliseconds, what a default Jackson `ObjectMapper` writes for a date (docs/api.md, "Compatibility details"). */
const CreationDateMillis = z
  .int()
  .min(MILLIS_MIN)
  .max(MILLIS_MAX)
  .transform((ms) => new Date(ms))
  .meta({ description: 'milliseconds since 1970-01-01T00:00:00Z', example: 1551558635420 });

/** A date-time with a numeric offset or Z, e.g. `2019-03-02T20:30:35.420+0000`, or epoch milliseconds: a Date once parsed. */
export const CreationDate = z.union([CreationDateText, CreationDateMillis], {
  error: (issue) =>
    typeof issue.input === 'number'
      ? `must be whole milliseconds since 1970-01-01 in the years ${CREATION_YEAR_MIN} to ${CREATION_YEAR_MAX}, or an ISO 8601 date-time with an offset`
      : 'must be an ISO 8601 date-time with an offset (e.g. 2019-03-02T20:30:35.420+0000) or epoch milliseconds',
});

export const Artifact = z.object({
  groupId: coordinate(COORDINATE_MAX),
  artifactId: coordinate(COORDINATE_MAX),
  version: coordinate(COORDINATE_MAX),
});
export type Artifact = z.infer<typeof Artifact>;

export const VersionRecord = z
  .object({
    projectName: coordinate(PROJECT_NAME_MAX),
    branch: coordinate(BRANCH_MAX),
    artifact: Artifact,
    /** Address of the source repository. */
    repositoryUrl: z.preprocess(absentWhenEmpty, RepositoryUrl.optional()),
    /** Defaults to now. */
    creationDate: z.preprocess(absentWhenEmpty, CreationDate.optional()),
    /** Kind of artifact; defaults to LIBRARY. */
    type: z.preprocess(absentWhenEmpty, label(TYPE_MAX).optional()),
    /** Makes this record the only latest one of its project, group, artifact and branch. */
    latestVersion: z.preprocess(absentWhenEmpty, LooseBoolean.optional()),
    /** Markdown: line breaks and tabs are its own. */
    description: z.preprocess(
      absentWhenEmpty,
      z
        .string()
        .regex(NO_NUL, NO_NUL_MESSAGE)
        .refine((s) => Buffer.byteLength(s, 'utf8') <= DESCRIPTION_MAX_BYTES, `at most ${DESCRIPTION_MAX_BYTES} bytes`)
        .optional(),
    ),
  })
  .meta({ id: 'VersionRecord' });
/** A record as the service takes it: the creation date parsed into a Date. */
export type VersionRecord = z.output<typeof VersionRecord>;
/** A record as a client sends it: the creation date as text (or epoch milliseconds). */
export type VersionRecordBody = Omit<VersionRecord, 'creationDate'> & { creationDate?: string | number };

export const PublishResult = z
  .object({
    _status: z.literal(true),
    uid: Uuid,
    /** false when the same coordinates were published before and the record was replaced. */
    created: z.boolean(),
  })
  .meta({ id: 'PublishResult' });
export type PublishResult = z.infer<typeof PublishResult>;

const filter = z.preprocess(
  absentWhenEmpty,
  z.string().max(FILTER_MAX, `at most ${FILTER_MAX} characters`).regex(NO_NUL, NO_NUL_MESSAGE).optional(),
);

export const SearchRequest = z
  .object({
    projectName: filter,
    branch: filter,
    groupId: filter,
    artifactId: filter,
    version: filter,
    type: filter,
    uid: z.preprocess(absentWhenEmpty, Uuid.optional()),
    /** true keeps only latest records; false or absent filters nothing. */
    latestVersion: z.preprocess(absentWhenEmpty, LooseBoolean.optional()),
    /** true keeps only records published through a trusted publisher (with provenance); false or absent filters nothing. */
    verified: z.preprocess(absentWhenEmpty, LooseBoolean.optional()),
    /** Only records current in this environment (of their project). */
    environment: z.preprocess(absentWhenEmpty, EnvironmentName.optional()),
    /** The nested form older clients send; the flat fields win. */
    artifact: z.preprocess(
      absentWhenEmpty,
      z.object({ groupId: filter, artifactId: filter, version: filter }).optional(),
    ),
  })
  .meta({ id: 'SearchRequest' });
export type SearchRequest = z.infer<typeof SearchRequest>;

/** The body of a search, parsed into its filters (see `searchFilters`). */
export const SearchFiltersBody = SearchRequest.transform((request) => searchFilters(request));

/** The filters of a search once the nested and flat forms are merged. */
export type SearchFilters = Omit<SearchRequest, 'artifact'>;

/**
 * Every field named, in one order, so that every search's filters have the same layout: built by
 * spreading the request's own fields instead, each set of fields a client sent made an object of
 * another layout, and reading them one by one in server/db/versions.ts took some 12 µs of a search.
 */
export function searchFilters(request: SearchRequest): SearchFilters {
  const artifact = request.artifact;
  return {
    projectName: request.projectName,
    branch: request.branch,
    groupId: request.groupId ?? artifact?.groupId,
    artifactId: request.artifactId ?? artifact?.artifactId,
    version: request.version ?? artifact?.version,
    type: request.type,
    uid: request.uid,
    latestVersion: request.latestVersion,
    verified: request.verified,
    environment: request.environment,
  };
}

/** `repositoryUrl` and `latestVersion` are columns of the older package page, which sorts by them. */
export const SORT_FIELDS = [
  'projectName',
  'branch',
  'groupId',
  'artifactId',
  'version',
  'creationDate',
  'type',
  'repositoryUrl',
  'latestVersion',
] as const;
export type SortField = (typeof SORT_FIELDS)[number];
export const SORT_ALIASES: Record<string, SortField> = {
  'artifact.groupId': 'groupId',
  'artifact.artifactId': 'artifactId',
  'artifact.version': 'version',
};

/** Decimal digits only: Number() would also take ' ', '0x10' and '1e3'. */
const WHOLE_NUMBER = /^-?\d+$/;
/** A whole number from the query string, in decimal digits; absent when empty. */
export const wholeNumber = (name: string) =>
  z.preprocess(
    (v) => (v === '' || v === null ? undefined : typeof v === 'string' && WHOLE_NUMBER.test(v) ? Number(v) : v),
    z.number({ error: `${name} must be a whole number` }).int(`${name} must be a whole number`).optional(),
  );

/** Paging and sorting, from the query string. Both the 1-based and the older 0-based spellings. */
export const SearchQuery = z
  .object({
    page: wholeNumber('page').pipe(z.number().min(0, 'must be 1 or more').optional()),
    size: wholeNumber('size').pipe(z.number().min(1, 'must be 1 or more').max(PAGE_SIZE_MAX, `at most ${PAGE_SIZE_MAX}`).optional()),
    aPage: wholeNumber('aPage').pipe(z.number().min(0, 'must be 0 or more').optional()),
    aSize: wholeNumber('aSize').pipe(z.number().min(1, 'must be 1 or more').optional()),
    sortField: z.preprocess(
      (v) => (v === '' ? undefined : typeof v === 'string' ? (SORT_ALIASES[v] ?? v) : v),
      z.enum(SORT_FIELDS, { error: `must be one of ${SORT_FIELDS.join(', ')}` }).optional(),
    ),
    sortDirection: z.preprocess(
      (v) => (v === '' ? undefined : typeof v === 'string' ? v.toUpperCase() : v),
      z.enum(['ASC', 'DESC'], { error: 'must be ASC or DESC' }).optional(),
    ),
  })
  .meta({ id: 'SearchQuery' });
export type SearchQuery = z.infer<typeof SearchQuery>;

/** The page and order a search asks for: 1-based, both spellings of the query string made one. */
export interface PageRequest {
  page: number;
  size: number;
  sortField?: SortField;
  sortDirection: 'ASC' | 'DESC';
}

/** The page request of a query string. */
export function paging(query: SearchQuery): PageRequest {
  const page = query.page !== undefined ? Math.max(query.page, 1) : query.aPage !== undefined ? query.aPage + 1 : 1;
  const size = query.size ?? (query.aSize !== undefined ? Math.min(query.aSize, PAGE_SIZE_MAX) : PAGE_SIZE_DEFAULT);
  return { page, size, sortField: query.sortField, sortDirection: query.sortDirection ?? 'ASC' };
}

/** The query string of a search, parsed into its page request. */
export const PageRequestQuery = SearchQuery.transform(paging);

/**
 * Where a record published through a trusted publisher was built, copied from the verified ID token
 * (docs/api.md, "Trusted publishing"): null where the provider has no such claim.
 */
export const Provenance = z
  .object({
    issuer: z.string(),
    subject: z.string(),
    repository: z.string().nullable(),
    repositoryId: z.string().nullable(),
    /** `refs/heads/main`, `refs/tags/v1.2.0`. */
    ref: z.string().nullable(),
    sha: z.string().nullable(),
    workflow: z.string().nullable(),
    runId: z.string().nullable(),
    runUrl: z.string().nullable(),
    environment: z.string().nullable(),
    publisherId: Uuid,
    verifiedAt: Timestamp,
  })
  .meta({ id: 'Provenance' });
export type Provenance = z.infer<typeof Provenance>;

export const VersionInformation = z
  .object({
    uid: Uuid,
    projectName: z.string(),
    branch: z.string(),
    groupId: z.string(),
    artifactId: z.string(),
    version: z.string(),
    artifact: z.object({ groupId: z.string(), artifactId: z.string(), version: z.string() }),
    repositoryUrl: z.string().nullable(),
    /** `2019-03-02T20:30:35.420+0000`, in UTC. */
    creationDate: z.string(),
    type: z.string(),
    latestVersion: z.boolean(),
    description: z.string().nullable(),
    /** Set when the record was published through a trusted publisher; null: not verified (absent from servers before trusted publishing). */
    provenance: Provenance.nullable().optional(),
    /** Set while the version is vetoed: it cannot be promoted anywhere. */
    veto: z
      .object({ reason: z.string(), by: z.string(), at: Timestamp })
      .nullable()
      .meta({ id: 'Veto' }),
  })
  .meta({ id: 'VersionInformation' });
export type VersionInformation = z.infer<typeof VersionInformation>;

export const SearchResult = z
  .object({
    versionInformation: z.array(VersionInformation),
    page: PageInfo,
  })
  .meta({ id: 'SearchResult' });
export type SearchResult = z.infer<typeof SearchResult>;

export const LatestQuery = z
  .object({
    groupId: text(COORDINATE_MAX),
    artifactId: text(COORDINATE_MAX),
    branch: z.preprocess(absentWhenEmpty, text(BRANCH_MAX).optional()),
    projectName: z.preprocess(absentWhenEmpty, text(PROJECT_NAME_MAX).optional()),
    /** The version current in this environment instead of the latest record (404 when none). */
    environment: z.preprocess(absentWhenEmpty, EnvironmentName.optional()),
  })
  .meta({ id: 'LatestQuery' });
export type LatestQuery = z.infer<typeof LatestQuery>;

export const UidParams = z.object({ uid: Uuid });

/** `PUT /v1/repositories/{uid}/veto`. */
export const VetoRequest = z
  .object({
    /** Why the version must not go anywhere; shown on the record and in every refused promotion. */
    reason: text(VETO_REASON_MAX),
  })
  .meta({ id: 'VetoRequest' });
export type VetoRequest = z.infer<typeof VetoRequest>;
