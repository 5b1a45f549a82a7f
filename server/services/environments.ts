// Environments and promotion (docs/api.md, "Environments and promotion"): each project's
// environments, what is current in them, promotions with their gates, the history, and vetoes.
import { pageInfo } from '../../common/schemas/common.js';
import type { Knex } from 'knex';
import { AppError } from '../../common/errors.js';
import type { CurrentVersion, EnvironmentList, EnvironmentsRequest, Promotion, PromotionPage, PromotionRequest, PromotionsQuery } from '../../common/schemas/environments.js';
import type { VersionInformation } from '../../common/schemas/repositories.js';
import { type CurrentRecord, type StoredPromoter, clearEnvironments, currentOfProject } from '../db/environment-current.js';
import { type StoredEnvironment, listEnvironments, replaceEnvironments } from '../db/environments.js';
import { appendEvent } from '../db/events.js';
import { type StoredPromotion, firstPromotedAt, listPromotions, promote } from '../db/promotions.js';
import { type StoredVersion, findByCoordinates, findByUid, setVeto } from '../db/versions.js';
import type { Actor, Services } from './context.js';
import { toVersionInformation } from './versions.js';

const MINUTE_MS = 60_000;

function toCurrent(current: CurrentRecord): CurrentVersion {
  return {
    groupId: current.groupId,
    artifactId: current.artifactId,
    record: toVersionInformation(current.record),
    promotionId: current.promotionId,
    promotedAt: current.promotedAt.toISOString(),
    promotedBy: current.promotedBy,
  };
}

async function environmentList(services: Services, projectName: string): Promise<EnvironmentList> {
  const [environments, current] = await Promise.all([listEnvironments(services.db, projectName), currentOfProject(services.db, projectName)]);
  return {
    projectName,
    environments: environments.map((environment) => ({
      name: environment.name,
      requires: environment.requires,
      soakMinutes: environment.soakMinutes,
      protected: environment.protected,
      current: current.filter((c) => c.environment === environment.name).map(toCurrent),
    })),
  };
}

/** The project's environments in order, each with its current version per artifact. */
export function environments(services: Services, projectName: string): Promise<EnvironmentList> {
  return environmentList(services, projectName);
}

/**
 * Makes the project's environments these. An environment left out is gone with its current
 * versions (its history stays): what runs there is no longer the registry's to say.
 */
export async function setEnvironments(services: Services, projectName: string, request: EnvironmentsRequest): Promise<{ list: EnvironmentList; removed: string[] }> {
  const removed = await services.db.transaction(async (trx) => {
    const gone = await replaceEnvironments(trx, projectName, request.environments, services.now());
    await clearEnvironments(trx, projectName, gone);
    return gone;
  });
  return { list: await environmentList(services, projectName), removed };
}

function promoterOf(actor: Actor): StoredPromoter {
  return { userId: actor.userId, username: actor.username, tokenId: actor.projectToken?.id ?? null };
}

export function toPromotion(p: StoredPromotion): Promotion {
  return {
    id: p.id,
    uid: p.uid,
    projectName: p.projectName,
    groupId: p.groupId,
    artifactId: p.artifactId,
    branch: p.branch,
    version: p.version,
    environment: p.environment,
    previousUid: p.previousUid,
    previousVersion: p.previousVersion,
    rollback: p.rollback,
    promotedAt: p.promotedAt.toISOString(),
    promotedBy: p.promotedBy,
    comment: p.comment,
  };
}

function findEnvironment(list: StoredEnvironment[], projectName: string, name: string): StoredEnvironment {
  const found = list.find((environment) => environment.name === name);
  if (!found) {
    const names = list.map((environment) => environment.name);
    throw new AppError('not_found', `project ${projectName} has no environment ${name}${names.length ? ` (it has ${names.join(', ')})` : ' (it has none: PUT /v1/projects/{projectName}/environments)'}`);
  }
  return found;
}

/**
 * The gates of a promotion into `environment` (docs/api.md): not vetoed; current, or once current,
 * in the environment it requires; there at least its soak.
 */
function gates(services: Services, environment: StoredEnvironment) {
  return async (trx: Knex.Transaction, record: StoredVersion) => {
    if (record.veto) throw new AppError('conflict', `vetoed: ${record.veto.reason}`, { body: { gate: 'veto' } });
    if (environment.requires === null) return;
    const since = await firstPromotedAt(trx, record.uid, environment.requires);
    if (!since) throw new AppError('conflict', `requires ${environment.requires}: ${record.version} has never been in ${environment.requires}`, { body: { gate: 'requires' } });
    if (environment.soakMinutes === null) return;
    const minutes = Math.floor((services.now().getTime() - since.getTime()) / MINUTE_MS);
    if (minutes < environment.soakMinutes) {
      throw new AppError('conflict', `soak: ${Math.max(minutes, 0)} of ${environment.soakMinutes} minutes in ${environment.requires}`, { body: { gate: 'soak' } });
    }
  };
}

/** What a promotion names: the record (by uid or coordinates) and the environment of its project. */
export interface PromotionSubject {
  projectName: string;
  record: StoredVersion;
  environment: StoredEnvironment;
}

/** The record and environment a promotion request names, as its access rule judges them. */
export async function promotionOf(services: Services, request: PromotionRequest): Promise<PromotionSubject> {
  const record =
    request.uid !== undefined
      ? await findByUid(services.db, request.uid)
      : await findByCoordinates(services.db, request as Required<Omit<PromotionRequest, 'uid' | 'comment'>>).then((found) => {
          if (!found) throw new AppError('not_found', `no version record ${request.projectName} ${request.branch} ${request.groupId}:${request.artifactId}:${request.version}`);
          return found;
        });
  const environment = findEnvironment(await listEnvironments(services.db, record.projectName), record.projectName, request.environment);
  return { projectName: record.projectName, record, environment };
}

/**
 * Promotes the record into the environment `promotionOf` found: 201 with the new history entry, or
 * 200 with the entry that made it current when it is current there already (nothing is recorded).
 */
export async function promoteRecord(
  services: Services,
  actor: Actor,
  request: PromotionRequest,
  { record, environment }: PromotionSubject,
): Promise<{ promotion: Promotion; created: boolean }> {
  const by = promoterOf(actor);
  const promoted = await promote(services.db, {
    uid: record.uid,
    key: { projectName: record.projectName, groupId: record.groupId, artifactId: record.artifactId },
    environment: environment.name,
    by,
    comment: request.comment ?? null,
    now: services.now(),
    check: gates(services, environment),
    eventBy: { ...by },
  });
  if (promoted.created) {
    services.log.info({ uid: record.uid, environment: environment.name, by: actor.username, rollback: promoted.promotion.rollback }, 'version promoted');
  }
  return { promotion: toPromotion(promoted.promotion), created: promoted.created };
}

/** A page of the promotion history, newest first. */
export async function promotionHistory(services: Services, query: PromotionsQuery): Promise<PromotionPage> {
  const { items, total } = await listPromotions(services.db, query, query);
  return {
    promotions: items.map(toPromotion),
    page: pageInfo(total, query, items.length),
  };
}


/** Vetoes a version (a new reason replaces the old one), with the event `version.vetoed`. */
export async function vetoRecord(services: Services, actor: Actor, uid: string, reason: string): Promise<VersionInformation> {
  const by = actor.username;
  const stored = await setVeto(services.db, uid, { reason, by, at: services.now() }, (trx, row) =>
    appendEvent(trx, 'version.vetoed', { record: row, reason, by: promoterOf(actor) }, String(row.project_name)),
  );
  services.log.info({ uid, by }, 'version vetoed');
  return toVersionInformation(stored);
}

/** Lifts a version's veto; the record as it is now (lifting none changes nothing). */
export async function liftVeto(services: Services, actor: Actor, uid: string): Promise<VersionInformation> {
  const stored = await setVeto(services.db, uid, null);
  services.log.info({ uid, by: actor.username }, 'veto lifted');
  return toVersionInformation(stored);
}
