// Ownership: the source id that names a definition file, and the marker every job and view we
// write carries at the end of its description (docs/jobs.md, "Ownership and sync").
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { dirname, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { itemKey } from './names.js';

const run = promisify(execFile);

// The marker is a sentence at the very end of the description, readable on the job's page under
// any markup formatter (Jenkins' default one shows text as it is). Only the last one counts, so
// one quoted earlier in the description is skipped. The item's own full name follows the source
// (Jenkins names hold no `;`).
const SENTENCE_TAIL = ': edits made in Jenkins are overwritten by the next apply.';
const MARKER = /\n?Managed by repoadmin from ([^\n]+?) \(item ([^;\n]+?)(?:; trigger token sha256 ([0-9a-f]{16}))?\): edits made in Jenkins are overwritten by the next apply\.\s*$/;
// Markers written before the sentence: an HTML comment, the item's name in the later ones only.
const COMMENT_MARKER = /\n?<!-- managed by repoadmin; source: ((?:(?!-->).)+?)(?:; item: ([^;]+?))?(?:; trigger token sha256: ([0-9a-f]{16}))? -->\s*$/;

/**
 * What we write about a trigger token, since current Jenkins never gives it back in clear: from
 * core 2.568 / 2.555.3 (SECURITY-3744) `GET config.xml` re-serialises the job, and
 * BuildAuthorizationToken holds a hudson.util.Secret, written encrypted. A one-way digest of the
 * token (a UUID) tells whether the file still asks for the token we wrote, and nothing more.
 */
export function tokenFingerprint(token: string): string {
  return createHash('sha256').update(`repoadmin remoteTriggerUuid\n${token}`).digest('hex').slice(0, 16);
}

/**
 * The description written to Jenkins: the file's description, then the marker, which names the
 * source and the item it was written for. A copy made in Jenkins ("Copy from") carries the
 * marker of the item it was copied from, and so is not taken for ours.
 */
export function withMarker(description: string, sourceId: string, item: string, triggerToken?: string): string {
  const token = triggerToken === undefined ? '' : `; trigger token sha256 ${tokenFingerprint(triggerToken)}`;
  const marker = `Managed by repoadmin from ${sourceId} (item ${item}${token})${SENTENCE_TAIL}`;
  return description === '' ? marker : `${description}\n${marker}`;
}

export interface Marker {
  sourceId: string;
  /** The full name of the item the marker was written for; undefined in markers written before it was recorded. */
  item: string | undefined;
  /** The fingerprint of the trigger token we wrote, if any. */
  tokenFingerprint: string | undefined;
}

/** The marker of a live description, or undefined when no repoadmin marker is there. */
export function markerOf(description: string | null | undefined): Marker | undefined {
  const match = description ? MARKER.exec(description) ?? COMMENT_MARKER.exec(description) : null;
  return match ? { sourceId: match[1]!, item: match[2], tokenFingerprint: match[3] } : undefined;
}

/**
 * Whether the item of this full name and description is one `sourceId` wrote: its marker names the
 * source and the item itself (Jenkins compares names without regard to case). A marker written
 * before items were named in it counts for the source alone.
 */
export function isOwnedBy(sourceId: string, fullName: string, description: string | null | undefined): boolean {
  const marker = markerOf(description);
  return marker?.sourceId === sourceId && (marker.item === undefined || itemKey(marker.item) === itemKey(fullName));
}

/** The source id in a live description, or undefined when no repoadmin marker is there. */
export function markerSource(description: string | null | undefined): string | undefined {
  return markerOf(description)?.sourceId;
}

const DEFAULT_PORT: Record<string, string> = { ssh: '22', 'git+ssh': '22', https: '443', http: '80', git: '9418' };

/**
 * A repository address without scheme, user info or credentials, the scheme's default port,
 * `.git` suffix or trailing slash, host in lower case and the `:` of scp-style addresses as `/`:
 * https and ssh clones of one repository give the same id, and no credential ever reaches Jenkins.
 */
export function normalizeRemote(address: string): string {
  const trimmed = address.trim();
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/\/)(.*)$/.exec(trimmed);
  let host: string;
  let path: string;
  if (scp && !/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    [, host = '', path = ''] = scp;
  } else {
    const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(trimmed)?.[1]?.toLowerCase() ?? '';
    const withoutScheme = trimmed.slice(scheme === '' ? 0 : scheme.length + 3);
    const slash = withoutScheme.indexOf('/');
    const authority = slash < 0 ? withoutScheme : withoutScheme.slice(0, slash);
    const hostAndPort = authority.slice(authority.lastIndexOf('@') + 1);
    // The scheme's own port says nothing: ssh://host:22/x is the repository of host:x.
    const port = /:(\d+)$/.exec(hostAndPort)?.[1];
    host = port !== undefined && port === DEFAULT_PORT[scheme] ? hostAndPort.slice(0, -port.length - 1) : hostAndPort;
    path = slash < 0 ? '' : withoutScheme.slice(slash + 1);
  }
  const cleanPath = path.replace(/\/+$/, '').replace(/\.git$/, '').replace(/^\/+/, '');
  const hostPart = host.toLowerCase();
  return hostPart === '' ? `/${cleanPath}` : `${hostPart}/${cleanPath}`;
}

/** `<path in repository>@<normalised remote>` for a file read from a clone of `remote`. */
export function gitSourceId(remote: string, pathInRepo: string): string {
  return `${pathInRepo.replace(/\\/g, '/')}@${normalizeRemote(remote)}`;
}

/** The default source id of a local file: its git remote plus path, else its absolute path. */
export async function localSourceId(file: string): Promise<string> {
  const absolute = resolve(file);
  const dir = dirname(absolute);
  try {
    const top = (await run('git', ['-C', dir, 'rev-parse', '--show-toplevel'])).stdout.trim();
    const remote = (await run('git', ['-C', dir, 'remote', 'get-url', 'origin'])).stdout.trim();
    if (top && remote) return gitSourceId(remote, relative(top, absolute));
  } catch {
    // Not in a git checkout, or no origin: the absolute path names the file.
  }
  return absolute;
}
