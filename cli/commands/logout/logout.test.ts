import { describe, expect, it } from 'vitest';
import { fakeDeps, SERVER } from '../../../test/cli/fakes.js';
import { runLogout } from './logout.js';

const login = (url: string) => ({ url, username: 'admin', userId: 'id', token: 't', expiresAt: '2030-01-01T00:00:00.000Z' });

describe('runLogout', () => {
  it('forgets the current server and keeps the others', async () => {
    const deps = fakeDeps();
    await deps.config.save(login('http://other:1'));
    await deps.config.save(login(SERVER));
    const report = await runLogout({}, deps);
    expect(report.json).toEqual({ url: SERVER, username: 'admin' });
    expect(deps.config.data()).toEqual({ servers: { 'http://other:1': login('http://other:1') } });
  });

  it('logs out of the --url server only', async () => {
    const deps = fakeDeps({ settings: { url: 'other:1/' } });
    await deps.config.save(login('http://other:1'));
    await deps.config.save(login(SERVER));
    await runLogout({}, deps);
    expect(deps.config.data()).toEqual({ current: SERVER, servers: { [SERVER]: login(SERVER) } });
  });

  it('succeeds with a note when not logged in', async () => {
    const report = await runLogout({}, fakeDeps());
    expect(report.notes).toEqual(['Not logged in anywhere.']);
  });
});
