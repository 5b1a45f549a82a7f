// Credentials in addresses: never stored, shown or sent further.

const ANY_SCHEME = '[a-z][a-z0-9+.-]*';

/**
 * Removes `user:password@` from every address in `text` whose scheme matches `schemes` (any by
 * default), up to the last `@` of the authority, as a password may hold an unencoded `@` itself.
 * `https://ci:s3cr3t@host/repo.git` becomes `https://host/repo.git`; `git@host:repo.git` stays.
 */
export function withoutUserInfo(text: string, schemes = ANY_SCHEME): string {
  // Without an `@` there is nothing to remove (most addresses): no expression made or run.
  if (!text.includes('@')) return text;
  return text.replace(new RegExp(`\\b(${schemes}):\\/\\/[^/?#\\s]*@`, 'gi'), '$1://');
}
