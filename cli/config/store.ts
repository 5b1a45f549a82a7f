// Stored logins, one per server, and which one is current (docs/cli.md, "Credentials and configuration").
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import Conf from 'conf';
import { AppError } from '../../common/errors.js';
import type { Role } from '../../common/schemas/users.js';

/** What `login` keeps for one server. */
export interface StoredLogin {
  url: string;
  username: string;
  userId: string;
  token: string;
  /** ISO 8601; null for a project token stored with `login --with-token` (its expiry is the server's to check). */
  expiresAt: string | null;
  /** The user's project, null for an administrator; absent in a login stored before it was kept. */
  projectName?: string | null;
  /** Absent in a login stored before it was kept. */
  role?: Role;
}

/** What is learnt about a stored login after it was stored. */
export type LoginDetails = Pick<StoredLogin, 'projectName' | 'role'>;

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
  /**
   * Adds to the login stored for a server what was learnt since, leaving the current server as it
   * is; nothing when that login was replaced (another token) or removed meanwhile.
   */
  complete(url: string, token: string, details: LoginDetails): Promise<void>;
  /** Forgets the login of a server; returns what was stored. */
  remove(url: string): Promise<StoredLogin | undefined>;
  /** The last write position a server gave (X-Repoadmin-Position), kept less than POSITION_KEPT_MS ago. */
  position(url: string): Promise<string | undefined>;
  /** Keeps a server's last write position, for the reads that follow (docs/cli.md, "Credentials and configuration"). */
  keepPosition(url: string, position: string): Promise<void>;
}

/**
 * How long a write's position is sent with the reads that follow: long enough for the next step of
 * a pipeline; past it any replica has long replayed the write.
 */
export const POSITION_KEPT_MS = 60_000;

/** The positions of the servers written to lately, by server address. */
type Positions = Record<string, { position: string; at: number }>;

/** The position rules over any place that can read and write the positions. */
function positionStore(read: () => Positions, write: (positions: Positions) => void, now: () => number): Pick<ConfigStore, 'position' | 'keepPosition'> {
  return {
    position: async (url) => {
      const kept = read()[url];
      return kept && now() - kept.at < POSITION_KEPT_MS ? kept.position : undefined;
    },
    keepPosition: async (url, position) => {
      const at = now();
      // Only the fresh ones are kept: the file does not grow with every server ever written to.
      const fresh = Object.entries(read()).filter(([, kept]) => at - kept.at < POSITION_KEPT_MS);
      write({ ...Object.fromEntries(fresh), [url]: { position, at } });
    },
  };
}

/** `$REPOADMIN_CONFIG_DIR`, else `$XDG_CONFIG_HOME/repoadmin`, else `~/.config/repoadmin`. */
export function configDir(env: NodeJS.ProcessEnv): string {
  if (env.REPOADMIN_CONFIG_DIR) return env.REPOADMIN_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'repoadmin');
  return join(env.HOME || homedir(), '.config', 'repoadmin');
}

interface Backend {
  path: string;
  read(): ConfigData;
  write(data: ConfigData): void;
  /** Runs a read and the write after it with no other process's change in between. */
  exclusive?<T>(work: () => T): Promise<T>;
}

/** The store's rules over any place that can read and write the whole data. */
export function configStore(backend: Backend): Omit<ConfigStore, 'position' | 'keepPosition'> {
  const exclusive = <T>(work: () => T): Promise<T> => (backend.exclusive ? backend.exclusive(work) : Promise.resolve(work()));
  return {
    path: async () => backend.path,
    current: async () => {
      const data = backend.read();
      return data.current ? data.servers[data.current] : undefined;
    },
    get: async (url) => backend.read().servers[url],
    save: (login) =>
      exclusive(() => {
        const data = backend.read();
        backend.write({ current: login.url, servers: { ...data.servers, [login.url]: login } });
      }),
    complete: (url, token, details) =>
      exclusive(() => {
        const data = backend.read();
        const login = data.servers[url];
        if (login?.token !== token) return;
        backend.write({ ...data, servers: { ...data.servers, [url]: { ...login, ...details } } });
      }),
    remove: async (url) => {
      // Nothing stored: nothing to change, and nothing to lock where the folder cannot be made.
      if (!backend.read().servers[url]) return undefined;
      return exclusive(() => {
        const data = backend.read();
        const removed = data.servers[url];
        if (!removed) return undefined;
        const { [url]: _, ...servers } = data.servers;
        backend.write({ current: data.current === url ? undefined : data.current, servers });
        return removed;
      });
    },
  };
}

/** An in-memory store, for tests and for runs that must leave nothing behind. */
export function memoryConfig(initial: ConfigData = { servers: {} }): ConfigStore & { data(): ConfigData } {
  let data = structuredClone(initial);
  let positions: Positions = {};
  const store = configStore({ path: '(memory)', read: () => data, write: (next) => void (data = structuredClone(next)) });
  return { ...store, ...positionStore(() => positions, (next) => void (positions = next), Date.now), data: () => data };
}

/** The config file: `config.json` in `configDir(env)`, readable by its owner only. */
export function fileConfig(env: NodeJS.ProcessEnv): ConfigStore {
  const dir = configDir(env);
  const file = join(dir, 'config.json');
  let conf: Conf<ConfigData> | undefined;
  const open = () => {
    if (!conf) {
      conf = new Conf<ConfigData>({
        cwd: dir,
        configName: 'config',
        configFileMode: 0o600,
      });
    }
    return conf;
  };
  const positionsFile = join(dir, 'positions.json');
  const readPositions = (): Positions => {
    try {
      return JSON.parse(readFileSync(positionsFile, 'utf8')) as Positions;
    } catch {
      // None kept, or a file cut short by a run killed while writing it: nothing to send.
      return {};
    }
  };
  const writePositions = (positions: Positions) => {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Written aside and renamed: parallel pipeline steps never read half a file.
    const aside = `${positionsFile}.${process.pid}`;
    writeFileSync(aside, JSON.stringify(positions), { mode: 0o600 });
    renameSync(aside, positionsFile);
  };
  const positions = positionStore(readPositions, writePositions, Date.now);
  const logins = configStore({
    path: file,
    read: () => {
      // No file, nothing stored: reading creates nothing (conf would make the folder), so a
      // pipeline whose HOME cannot be written still runs.
      if (!conf && !existsSync(file)) return { servers: {} };
      let data: ConfigData;
      try {
        data = open().store;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new AppError('internal', `cannot read the config file ${file} (${reason}): fix it, or delete it and run repoadmin login`);
      }
      const { current, servers = {} } = data;
      return { current, servers };
    },
    write: (data) => {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const c = open();
      c.store = data.current === undefined ? { servers: data.servers } : data;
      // conf creates the file with the mode but leaves an existing file's mode as it was.
      chmodSync(c.path, 0o600);
    },
    exclusive: async (work) => {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      return withLockFile(`${file}.lock`, work);
    },
  });
  return { ...logins, ...positions };
}

/** How long a lock file may stand before it is taken for one left by a run that was killed. */
const STALE_LOCK_MS = 10_000;

/**
 * Runs `work` while holding `lock`, a file made with O_EXCL: two logins at once (parallel pipeline
 * steps) each keep their server instead of one overwriting the other's.
 */
async function withLockFile<T>(lock: string, work: () => T): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = lockAge(lock);
      if (age !== undefined && age > STALE_LOCK_MS) rmSync(lock, { force: true });
      else if (attempt > 300) throw new AppError('internal', `the config file is locked by another repoadmin (${lock}): try again, or delete that file if none is running`);
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
    }
  }
  try {
    return work();
  } finally {
    rmSync(lock, { force: true });
  }
}

function lockAge(lock: string): number | undefined {
  try {
    return Date.now() - statSync(lock).mtimeMs;
  } catch {
    return undefined;
  }
}
