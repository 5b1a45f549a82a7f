// Credentials in addresses: never stored, shown or sent further.

/**
 * Removes `user:password@` from every address in `text` whose scheme matches `schemes` (any by
 * default), up to the last `@` of the authority, as a password may hold an unencoded `@` itself.
 * `https://ci:s3cr3t@host/repo.git` becomes `https://host/repo.git`; `git@host:repo.git` stays.
 */
export function withoutUserInfo(text: string, schemes = '[a-z][a-z0-9+.-]*'): string {
  return text.replace(new RegExp(`\\b(${schemes}):\\/\\/[^/?#\\s]*@`, 'gi'), '$1://');
}
