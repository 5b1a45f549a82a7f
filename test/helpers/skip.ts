// Skipped tests say why in the default output. Vitest's default reporter shows neither the names of
// skipped tests nor the note of `ctx.skip(note)` (only `--reporter=verbose` does), but it does show
// what a test file writes to standard error, under the file's name.

/** Writes why `what` is skipped, when `reason` is given, and says whether it is skipped. */
export function skipping(what: string, reason: string | undefined): boolean {
  if (reason) console.warn(`skipped: ${what}: ${reason}`);
  return Boolean(reason);
}
