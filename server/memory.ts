// The embedded database's process keeps its JavaScript heap small (README, "Embedded database").
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
