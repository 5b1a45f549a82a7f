import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import type { AttemptRecord } from '../db/webhooks.js';
import { type Held, MAX_BATCH, addFinished, batchSize, noneFinished, recordWhen, retryIn, withJitter } from './outbox.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('the retry schedule of webhook deliveries', () => {
  it('is 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h by default: 8 attempts', () => {
    expect(loadConfig([], {}).webhooks.retrySchedule).toEqual([5_000, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]);
  });

  it('spreads each wait by up to a fifth either way', () => {
    expect(withJitter(10_000, () => 0)).toBe(8_000);
    expect(withJitter(10_000, () => 0.5)).toBe(10_000);
    expect(withJitter(10_000, () => 0.999_999)).toBe(12_000);
    const waits = Array.from({ length: 200 }, () => retryIn([10_000], 0, { error: 'the receiver answered 500', status: 500, durationMs: 1 })!);
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(8_000);
    expect(Math.max(...waits)).toBeLessThanOrEqual(12_000);
    expect(new Set(waits).size).toBeGreaterThan(10);
  });

  it('takes the wait of the attempt it follows, and none after the last', () => {
    const schedule = [1_000, 100_000];
    const failed = { error: 'the receiver answered 500', status: 500, durationMs: 1 };
    expect(retryIn(schedule, 1, failed)).toBeGreaterThanOrEqual(80_000);
    expect(retryIn(schedule, 2, failed)).toBeUndefined();
  });

  it('honours a longer Retry-After (capped at a day), never a shorter one; a 410 is never retried', () => {
    const schedule = [5_000];
    const answered = (retryAfter: number) => ({ error: 'the receiver answered 503', status: 503, durationMs: 1, retryAfterMs: retryAfter });
    expect(retryIn(schedule, 0, answered(60_000))).toBe(60_000);
    expect(retryIn(schedule, 0, answered(10))).toBeGreaterThanOrEqual(4_000);
    expect(retryIn(schedule, 0, answered(30 * 24 * HOUR))).toBe(24 * HOUR);
    expect(retryIn(schedule, 0, { error: 'the receiver answered 410', status: 410, durationMs: 1 })).toBeUndefined();
  });
});

describe('the size of a batch of deliveries claimed at once', () => {
  it('is what a webhook starts in a quarter of the 10 s a lease leaves for starting attempts, at its recent pace', () => {
    expect(batchSize(undefined, 2)).toBe(2);
    expect(batchSize(undefined, 1)).toBe(1);
    expect(batchSize(1, 2)).toBe(MAX_BATCH);
    expect(batchSize(0, 2)).toBe(MAX_BATCH);
    expect(batchSize(100, 2)).toBe(50);
    expect(batchSize(100, 1)).toBe(25);
    // A receiver that takes seconds: no fewer than may be in flight at once.
    expect(batchSize(2_000, 2)).toBe(2);
    expect(batchSize(10_000, 2)).toBe(2);
  });
});


describe('when finished attempts are recorded', () => {
  const finishedOf = (webhookId: string, status = 200, n = 1): AttemptRecord[] =>
    Array.from({ length: n }, (_, i) => ({ claim: { id: `${webhookId}-${i}`, webhookId, leaseToken: 't' }, result: { status, durationMs: 1 }, retryInMs: undefined }));
  const held = (entries: Record<string, { queued: number; sending: number }>) =>
    new Map(Object.entries(entries).map(([id, { queued, sending }]) => [id, { queue: Array.from({ length: queued }), sending } as unknown as Held]));

  it('waits while every webhook of them still has attempts to make, and records at once when one is done, gone or enough are waiting', () => {
    const finished = noneFinished();
    for (const r of finishedOf('a', 200, 3)) addFinished(finished, r);
    for (const r of finishedOf('b')) addFinished(finished, r);
    const busy = { a: { queued: 5, sending: 1 }, b: { queued: 0, sending: 1 } };
    expect(recordWhen(finished, held(busy), false)).toBe('later');
    expect(recordWhen(finished, held(busy), true)).toBe('now');
    // b's batch is done (nothing queued or in flight), or b is no longer held.
    expect(recordWhen(finished, held({ ...busy, b: { queued: 0, sending: 0 } }), false)).toBe('now');
    expect(recordWhen(finished, held({ a: busy.a }), false)).toBe('now');
    // Whichever order they finished in.
    const doneFirst = noneFinished();
    for (const r of [...finishedOf('b'), ...finishedOf('a')]) addFinished(doneFirst, r);
    expect(recordWhen(doneFirst, held({ ...busy, b: { queued: 0, sending: 0 } }), false)).toBe('now');
    const gone = noneFinished();
    for (const r of [...finishedOf('a'), ...finishedOf('a', 410)]) addFinished(gone, r);
    expect(recordWhen(gone, held(busy), false)).toBe('now');
    const full = noneFinished();
    for (const r of finishedOf('a', 200, MAX_BATCH - 1)) addFinished(full, r);
    expect(recordWhen(full, held(busy), false)).toBe('later');
    addFinished(full, finishedOf('a')[0]!);
    expect(recordWhen(full, held(busy), false)).toBe('now');
  });
});
