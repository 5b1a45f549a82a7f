// Server addresses as the config file keys them: scheme, host, port and path, no trailing slash.
import { AppError } from '../../common/errors.js';

/** `localhost:9090/` and `http://localhost:9090` are the same server. */
export function normalizeUrl(raw: string, source = '--url'): string {
  const text = raw.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new AppError('usage', `${source}: "${raw}" is not a server address (e.g. http://localhost:9090)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AppError('usage', `${source}: "${raw}" must be an http or https address`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
