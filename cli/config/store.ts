// Stored logins, one per server, and which one is current (docs/cli.md, "Credentials and configuration").
import { chmodSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import Conf from 'conf';
import { AppError } from '../../common/errors.js';

/** What `login` keeps for one server. */
export interface StoredLogin {
  url: string;
  username: string;
  userId: string;
  token: string;
  /** ISO 8601; null for a project token stored with `login --with-token` (its expiry is the server's to check). */
  expiresAt: string | null;
}

export interface ConfigData {
  /** The server of the last login. */
  current?: string;
  servers: Record<string, StoredLogin>;
}

export interface ConfigStore {
  /** The file the logins live in. */
  path(): Promise<string>;
  /** The login of the current server, if any. */
  current(): Promise<StoredLogin | undefined>;
  /** The login stored for exactly this server. */
  get(url: string): Promise<StoredLogin | undefined>;
  /** Stores a login and makes its server the current one. */
  save(login: StoredLogin): Promise<void>;
  /** Forgets the login of a server; returns what was stored. */
  remove(url: string): Promise<StoredLogin | undefined>;
}

/** `$REPOADMIN_CONFIG_DIR`, else `$XDG_CONFIG_HOME/repoadmin`, else `~/.config/repoadmin`. */
export function configDir(env: NodeJS.ProcessEnv): string {
  if (env.REPOADMIN_CONFIG_DIR) return env.REPOADMIN_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'repoadmin');
  return join(env.HOME || homedir(), '.config', 'repoadmin');
}

/** The store's rules over any place that can read and write the whole data. */
export function configStore(backend: { path: string; read(): ConfigData; write(data: ConfigData): void }): ConfigStore {
  return {
    path: async () => backend.path,
    current: async () => {
      const data = backend.read();
      return data.current ? data.servers[data.current] : undefined;
    },
    get: async (url) => backend.read().servers[url],
    save: async (login) => {
      const data = backend.read();
      backend.write({ current: login.url, servers: { ...data.servers, [login.url]: login } });
    },
    remove: async (url) => {
      const data = backend.read();
      const removed = data.servers[url];
      if (!removed) return undefined;
      const { [url]: _, ...servers } = data.servers;
      backend.write({ current: data.current === url ? undefined : data.current, servers });
      return removed;
    },
  };
}

/** An in-memory store, for tests and for runs that must leave nothing behind. */
export function memoryConfig(initial: ConfigData = { servers: {} }): ConfigStore & { data(): ConfigData } {
  let data = structuredClone(initial);
  const store = configStore({ path: '(memory)', read: () => data, write: (next) => void (data = structuredClone(next)) });
  return { ...store, data: () => data };
}

/** The config file: `config.json` in `configDir(env)`, readable by its owner only. */
export function fileConfig(env: NodeJS.ProcessEnv): ConfigStore {
  const dir = configDir(env);
  let conf: Conf<ConfigData> | undefined;
  const open = () => {
    if (!conf) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      conf = new Conf<ConfigData>({
        cwd: dir,
        configName: 'config',
        configFileMode: 0o600,
      });
    }
    return conf;
  };
  return configStore({
    path: join(dir, 'config.json'),
    read: () => {
      let data: ConfigData;
      try {
        data = open().store;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new AppError('internal', `cannot read the config file ${join(dir, 'config.json')} (${reason}): fix it, or delete it and run repoadmin login`);
      }
      const { current, servers = {} } = data;
      return { current, servers };
    },
    write: (data) => {
      const c = open();
      c.store = data.current === undefined ? { servers: data.servers } : data;
      // conf creates the file with the mode but leaves an existing file's mode as it was.
      chmodSync(c.path, 0o600);
    },
  });
}
