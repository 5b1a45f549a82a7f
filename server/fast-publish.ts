// Publishing, the one write pipelines make all day, answered straight from node:http like the
// reads (server/fast-reads.ts) where the database checks the credential in the publish statement
// itself (PostgreSQL and PGlite). Only the ordinary case is answered here: a signed bearer token, a
// JSON body that is a valid record, and a statement that accepts the credential. Anything else
// (no token, an unsigned or expired one, an invalid record, a credential the database refuses, a
// project token whose use is due to be recorded) goes to Koa with the body already read, and Koa
// answers as always, down to which problem it reports first (test/server/fast-publish.test.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type PublishResult, VersionRecord } from '../common/schemas/repositories.js';
import type { Outages } from './db/outage.js';
import { isJson, lastResort, requestIdOf, respond } from './fast-reads.js';
import type { Metrics } from './metrics.js';
import { signedCredential } from './middleware/auth.js';
import { BODY_LIMIT_BYTES, hasBody, jsonObject, readBodyText } from './middleware/body.js';
import { failureAnswer } from './middleware/errors.js';
import { parse } from './middleware/validate.js';
import type { Services } from './services/context.js';
import { type SignedCredential, publish as publishRecord } from './services/versions.js';

const PUBLISH = '/v1/repositories';

/** Answers the request (itself or through `koa`) and returns true, or returns false having touched nothing. */
export type FastPublish = (req: IncomingMessage, res: ServerResponse) => boolean;

export function fastPublish(
  s: Services,
  metrics: Metrics | undefined,
  outages: Outages,
  koa: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): FastPublish {
  const publish = async (req: IncomingMessage, res: ServerResponse, credential: SignedCredential): Promise<void> => {
    const started = process.hrtime.bigint();
    let record: VersionRecord;
    try {
      record = parse(VersionRecord, jsonObject(await readBodyText(req)));
    } catch {
      // Koa reads the same body (readBodyText) and reports the record's problem, or the credential's first.
      return koa(req, res);
    }
    const id = requestIdOf(req);
    let result: PublishResult;
    try {
      result = await publishRecord(s, credential, record);
    } catch (caught) {
      const failure = failureAnswer(caught, id, s.log, outages);
      return respond(s, metrics, req, res, PUBLISH, started, id, failure.status, failure.body, failure.retryAfter);
    }
    respond(s, metrics, req, res, PUBLISH, started, id, result.created ? 201 : 200, result);
  };

  return (req, res) => {
    if (req.method !== 'POST' || req.url !== PUBLISH) return false;
    if (!isJson(req) || !hasBody(req) || Number(req.headers['content-length'] || 0) > BODY_LIMIT_BYTES) return false;
    const credential = signedCredential(s, req.headers.authorization);
    if (!credential) return false;
    publish(req, res, credential).catch((error: unknown) => lastResort(s, res, error));
    return true;
  };
}
