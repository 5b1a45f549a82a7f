// Text from the server made safe to print on a terminal.

/** C0 and C1 control characters but tab and line feed, and DEL: what a terminal could take as a command. */
// eslint-disable-next-line no-control-regex -- matches control characters to replace them, on purpose
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Text from the server made safe to print: a control character (an escape sequence in a published
 * branch or description could clear or retitle the reader's terminal) shows as U+FFFD. --json
 * prints the values exactly, escaped as JSON.
 */
export function printable(text: string): string {
  return text.replace(CONTROLS, '\ufffd');
}
