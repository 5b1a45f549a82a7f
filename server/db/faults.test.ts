import { describe, expect, it } from 'vitest';
import { CLIENT_TIMEOUT } from './client-timeout.js';
import { isDatabaseUnavailable, isRetryable, retryConflicts } from './faults.js';

describe('isDatabaseUnavailable', () => {
  it.each([
    ['55000', 'database "x" is not currently accepting connections'],
    ['53300', 'sorry, too many clients already'],
    ['53100', 'could not extend file: No space left on device'],
    ['57P01', 'terminating connection due to administrator command'],
    ['57P02', 'terminating connection due to crash of another server process'],
    ['57P03', 'the database system is starting up'],
    ['57014', 'canceling statement due to statement timeout'],
    ['28P01', 'password authentication failed for user "x"'],
    ['28000', 'role "x" is not permitted to log in'],
    ['08006', 'connection failure'],
    ['3D000', 'database "x" does not exist'],
    ['ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'],
    [CLIENT_TIMEOUT, 'the database did not answer within 11000 ms'],
    [undefined, 'select 1 - timeout expired'],
    [undefined, 'Connection terminated unexpectedly'],
  ])('%s (%s) is unavailable', (code, message) => {
    expect(isDatabaseUnavailable(Object.assign(new Error(message), { code }))).toBe(true);
  });

  it.each([
    ['23505', 'duplicate key value violates unique constraint'],
    ['22P02', 'invalid input syntax for type uuid'],
    ['42P01', 'relation "x" does not exist'],
    [undefined, 'Cannot read properties of undefined'],
  ])('%s (%s) is a bug, not an outage', (code, message) => {
    expect(isDatabaseUnavailable(Object.assign(new Error(message), { code }))).toBe(false);
  });

  it('knows a timed-out pool acquisition', () => {
    expect(isDatabaseUnavailable(Object.assign(new Error('Knex: Timeout acquiring a connection'), { name: 'KnexTimeoutError' }))).toBe(true);
  });
});

describe('retryConflicts', () => {
  it('runs a transaction again after a deadlock or a serialization failure', async () => {
    let calls = 0;
    const result = await retryConflicts(async () => {
      calls++;
      if (calls === 1) throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
      if (calls === 2) throw Object.assign(new Error('could not serialize access'), { code: '40001' });
      return 'done';
    });
    expect(result).toBe('done');
    expect(calls).toBe(3);
  });

  it('gives up after five retries, and never retries other errors', async () => {
    let calls = 0;
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    await expect(retryConflicts(async () => {
      calls++;
      throw deadlock;
    })).rejects.toBe(deadlock);
    expect(calls).toBe(6);
    calls = 0;
    await expect(retryConflicts(async () => {
      calls++;
      throw Object.assign(new Error('duplicate key'), { code: '23505' });
    })).rejects.toThrow('duplicate key');
    expect(calls).toBe(1);
    expect(isRetryable({ code: '40001' })).toBe(true);
  });
});
