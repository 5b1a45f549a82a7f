// Server addresses as the config file keys them: scheme, host, port and path, no trailing slash.
import { AppError } from '../../common/errors.js';

/** The API's path prefix: an address given with it (`http://host:9090/v1`) means the server below it. */
const API_PREFIX = /\/v1\/*$/;

/**
 * `localhost:9090/`, `http://localhost:9090` and `http://localhost:9090/v1/` are the same server.
 * `log` hears when the API prefix was taken off (for --verbose).
 */
export function normalizeUrl(raw: string, source = '--url', log?: (line: string) => void): string {
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
  const path = url.pathname.replace(/\/+$/, '');
  if (API_PREFIX.test(path)) {
    const server = `${url.origin}${path.replace(API_PREFIX, '')}`;
    log?.(`${source} ends with the API prefix /v1: using the server address ${server}`);
    return server;
  }
  return `${url.origin}${path}`;
}
