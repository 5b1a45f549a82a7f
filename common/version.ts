// The package version, inlined at build time; read from package.json when running from source.
import { createRequire } from 'node:module';

declare const __REPOADMIN_VERSION__: string | undefined;

export const VERSION: string =
  typeof __REPOADMIN_VERSION__ === 'string'
    ? __REPOADMIN_VERSION__
    : (createRequire(import.meta.url)('../package.json') as { version: string }).version;
