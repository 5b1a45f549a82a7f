import os from 'node:os';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, formatLine } from './log.js';

function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, log: createLogger('info', sink) };
}

describe('createLogger', () => {
  it('writes one JSON object per line with an ISO time and the numeric level', () => {
    const { lines, log } = capture();
    log.info({ requestId: 'r1', method: 'GET', path: '/health', status: 200, durationMs: 1.5 }, 'request');
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({ level: 30, msg: 'request', requestId: 'r1', method: 'GET', path: '/health', status: 200 });
    expect(entry.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('names the instance (host name and pid) in every line, as several instances write to one place', () => {
    const { lines, log } = capture();
    log.info('one');
    log.child({ requestId: 'r2' }).warn('two');
    expect(lines.map((line) => JSON.parse(line).instance)).toEqual([`${os.hostname()}:${process.pid}`, `${os.hostname()}:${process.pid}`]);
  });

  it('redacts password and token fields and the authorization header', () => {
    const { lines, log } = capture();
    log.info({ body: { password: 'hunter2-secret' }, answer: { token: 'eyJ.secret.jwt' }, req: { headers: { authorization: 'Bearer eyJ.x.y' } } }, 'oops');
    expect(lines.join('\n')).not.toMatch(/hunter2-secret|eyJ\.secret\.jwt|eyJ\.x\.y/);
    expect(lines[0]).toContain('[redacted]');
  });

  it('redacts the detail of a database error, which quotes the refused row', () => {
    const { lines, log } = capture();
    const error = Object.assign(new Error('duplicate key value violates unique constraint "revoked_tokens_pkey"'), {
      code: '23505',
      detail: 'Key (token_hash)=(0c1bb6f8aa) already exists.',
    });
    log.error({ err: error }, 'request failed');
    expect(lines[0]).not.toContain('0c1bb6f8aa');
    expect(JSON.parse(lines[0]!).err).toMatchObject({ code: '23505', message: expect.stringContaining('revoked_tokens_pkey') });
  });

  it('logs a failure without its stack or the SQL it ran, naming where it was thrown', () => {
    const { lines, log } = capture();
    // As knex reports a failed statement on PostgreSQL (message) and on MariaDB (sqlMessage, sql).
    const pg = Object.assign(new Error('select id, password_hash from users where id = $1 - relation "users" does not exist'), { code: '42P01' });
    const mysql = Object.assign(new Error("select id from users where id = ? limit 1 - Table 'x.users' doesn't exist"), {
      code: 'ER_NO_SUCH_TABLE', errno: 1146, sqlState: '42S02', sqlMessage: "Table 'x.users' doesn't exist", sql: 'select id from users where id = 7 limit 1',
    });
    log.error({ err: pg }, 'request failed');
    log.error({ err: new Error('outer', { cause: mysql }) }, 'request failed');
    expect(lines.join('\n')).not.toMatch(/password_hash|select id|\n\s+at |node_modules/);
    const [first, second] = lines.map((line) => JSON.parse(line).err);
    expect(first).toEqual({ type: 'Error', message: 'relation "users" does not exist', code: '42P01', at: expect.stringMatching(/^server\/log\.test\.ts:\d+$/) });
    expect(second.cause).toMatchObject({ message: "Table 'x.users' doesn't exist", code: 'ER_NO_SUCH_TABLE', errno: 1146, sqlState: '42S02' });
  });

  it('keeps to its level', () => {
    const { lines, log } = capture();
    log.debug('hidden');
    log.warn('shown');
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['shown']);
  });
});

describe('formatLine', () => {
  const request = JSON.stringify({ level: 30, time: '2026-11-21T06:02:33.123Z', requestId: 'abc', method: 'POST', path: '/v1/repositories', status: 201, durationMs: 3.25, msg: 'request' });

  it('shows a request as time, level, method, path, status and duration, then the other fields', () => {
    expect(formatLine(`${request}\n`, false)).toBe('06:02:33.123 INFO  POST /v1/repositories 201 3.25 ms requestId=abc\n');
  });

  it('colours the level and the status only when asked', () => {
    const coloured = formatLine(request, true);
    expect(coloured).toContain('\u001b[32mINFO \u001b[39m');
    expect(coloured).toContain('\u001b[32m201\u001b[39m');
    expect(formatLine(request, false)).not.toContain('\u001b[');
  });

  it('shows other messages with their fields quoted where needed, and an error stack indented below', () => {
    const line = JSON.stringify({
      level: 50,
      time: '2026-11-21T06:02:33.123Z',
      requestId: 'r2',
      note: 'two words',
      err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at here' },
      msg: 'request failed',
    });
    expect(formatLine(line, false)).toBe('06:02:33.123 ERROR request failed requestId=r2 note="two words"\n    Error: boom\n        at here\n');
  });

  it('passes lines that are not JSON through', () => {
    expect(formatLine('plain text', false)).toBe('plain text\n');
    expect(formatLine('42\n', false)).toBe('42\n');
  });
});
