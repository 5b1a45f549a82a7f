// Skipped tests say why in the default output. Vitest's default reporter shows neither the names of
// skipped tests nor the note of `ctx.skip(note)` (only `--reporter=verbose` does), but it does show
// what a test file writes to standard error, under the file's name.

/** Writes why `what` is skipped, when `reason` is given, and says whether it is skipped. */
export function skipping(what: string, reason: string | undefined): boolean {
  if (reason) console.warn(`skipped: ${what}: ${reason}`);
  return Boolean(reason);
}

/**
 * The namespace tests (a first login from another address, two servers in two pid namespaces) need
 * root for `unshare`: skipped without it, unless REPOADMIN_REQUIRE_NAMESPACES=1 (set by .ci/run)
 * makes that a failure, since they are the only check of two acceptance rules.
 */
export function namespaceSkip(what: string, problem: string | undefined): boolean {
  if (problem && process.env.REPOADMIN_REQUIRE_NAMESPACES === '1') throw new Error(`REPOADMIN_REQUIRE_NAMESPACES=1 but ${problem}`);
  return skipping(what, problem);
}
