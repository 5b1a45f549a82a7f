// A program's standard streams, as the command line and the server's start-up write to them.
import type { Readable, Writable } from 'node:stream';

export interface Io {
  /** Results: data for pipes and people. */
  out(text: string): void;
  /** Everything else: progress, warnings, confirmations. */
  err(text: string): void;
  /** All of standard input (for --password-stdin and friends). */
  readStdin(): Promise<string>;
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
}
