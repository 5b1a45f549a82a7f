// The sign-in token, kept in sessionStorage only: it ends with the tab and is never written to
// localStorage or a cookie.
const KEY = 'repoadmin.session';

export interface Session {
  token: string;
  username: string;
  /** ISO 8601; a token past this time is dropped instead of being sent. null: a project token, whose expiry the server checks. */
  expiresAt: string | null;
}

function storage(): Storage | undefined {
  try {
    return window.sessionStorage;
  } catch {
    return undefined;
  }
}

export function loadSession(now = Date.now()): Session | undefined {
  const text = storage()?.getItem(KEY);
  if (!text) return undefined;
  try {
    const session = JSON.parse(text) as Partial<Session>;
    if (typeof session.token === 'string' && typeof session.username === 'string' && session.expiresAt === null) return session as Session;
    if (typeof session.token === 'string' && typeof session.username === 'string' && typeof session.expiresAt === 'string') {
      const expires = Date.parse(session.expiresAt);
      if (Number.isNaN(expires) || expires > now) return session as Session;
    }
  } catch {
    // An unreadable entry is dropped below.
  }
  clearSession();
  return undefined;
}

export function saveSession(session: Session): void {
  storage()?.setItem(KEY, JSON.stringify(session));
}

export function clearSession(): void {
  storage()?.removeItem(KEY);
}
