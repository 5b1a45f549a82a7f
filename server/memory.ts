// The embedded database's process keeps its JavaScript heap small (docs/benchmarks.md, "The embedded database's memory").
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Keeps V8's young generation at its smallest (two semi-spaces of 1 MB instead of growing to 16 MB
 * each): about 30 MB less memory for a few more, shorter, minor collections. V8 reads this flag each
 * time it would grow the young generation, so it takes effect when set at run time, unlike
 * --max-semi-space-size.
 */
export function keepYoungGenerationSmall(): void {
  v8.setFlagsFromString('--semi-space-growth-factor=1');
}

/**
 * Optimises PGlite's WebAssembly one function at a time. V8 first compiles PostgreSQL quickly
 * (Liftoff), then recompiles the functions that run often with its optimising compiler, by default
 * on up to four background threads at once. Each of those threads allocates its compiler's working
 * memory from a malloc arena of its own, and the freed memory stays in the arenas (resident, never
 * returned): 50-90 MB after the first start. One at a time, the arenas hold the working memory of
 * one compilation: about 50 MB less after a start and 10-20 MB less after 1,000 publishes
 * (bench/pglite-memory.ts). The code is the same optimised code, only ready a little later; the
 * flag is read each time V8 schedules compilations, so it takes effect when set at run time, before
 * the WebAssembly module is compiled. Nothing else in the server uses WebAssembly.
 */
export function compileWebAssemblyOneAtATime(): void {
  v8.setFlagsFromString('--wasm-num-compilation-tasks=1');
}

/**
 * Runs PGlite's WebAssembly as V8's baseline compiler (Liftoff) makes it, without recompiling the
 * functions that run often with the optimising compiler (TurboFan). That second compilation, its
 * code and the compiler's leftover working memory took 45-50 MB after a start and 100 MB and more
 * under load; without it the embedded database answers about a tenth fewer requests a second
 * (bench/results/2026-11-24.md), still about a thousand publishes. Memory comes first there: a
 * server that needs the throughput runs on PostgreSQL. Read by V8 each time it would tier a
 * function up, so it takes effect when set at run time, before the WebAssembly module is compiled.
 */
export function compileWebAssemblyOnce(): void {
  v8.setFlagsFromString('--liftoff-only');
}

/** V8's default growth (doubling), for a server on PostgreSQL or MariaDB/MySQL, where throughput comes first. */
export function letYoungGenerationGrow(): void {
  v8.setFlagsFromString('--semi-space-growth-factor=2');
}

/**
 * One full collection, once the server is ready: what opening the embedded database left behind
 * (about 10 MB of its start-up buffers) is given back at once instead of whenever V8 gets to it.
 */
export function collectStartupGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}
