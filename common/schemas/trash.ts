// Deleting records and the trash (docs/retention.md): the delete's query, the trash's page.
import * as z from 'zod';
import { LooseBoolean, PageInfo, Timestamp, text } from './common.js';
import { PAGE_SIZE_MAX, VersionInformation } from './repositories.js';
import { PROJECT_NAME_MAX } from './users.js';

const PAGE_SIZE_DEFAULT = 20;

export const DeleteQuery = z
  .object({
    /** Deletes a key's latest record too; the key's highest remaining version becomes the latest. */
    force: LooseBoolean.optional().default(false),
  })
  .meta({ id: 'DeleteQuery' });
export type DeleteQuery = z.output<typeof DeleteQuery>;

const pageNumber = (max: number) =>
  z.coerce.number({ error: 'must be a whole number' }).int('must be a whole number').min(1, 'must be 1 or more').max(max, `at most ${max}`);

export const TrashQuery = z
  .object({
    /** Only this project's records (a ROLE_USER sees only its own project's). */
    projectName: text(PROJECT_NAME_MAX).optional(),
    page: pageNumber(1_000_000).optional().default(1),
    size: pageNumber(PAGE_SIZE_MAX).optional().default(PAGE_SIZE_DEFAULT),
  })
  .meta({ id: 'TrashQuery' });
export type TrashQuery = z.output<typeof TrashQuery>;

export const TrashedVersion = VersionInformation.extend({
  deletedAt: Timestamp,
  /** The user name, or `retention:<policy name>`. */
  deletedBy: z.string(),
  /** When it leaves the trash for good. */
  purgeAfter: Timestamp,
}).meta({ id: 'TrashedVersion' });
export type TrashedVersion = z.infer<typeof TrashedVersion>;

export const TrashPage = z
  .object({
    records: z.array(TrashedVersion),
    page: PageInfo,
  })
  .meta({ id: 'TrashPage' });
export type TrashPage = z.infer<typeof TrashPage>;
