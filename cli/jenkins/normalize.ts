// Normalises config.xml so that the generated and the live config compare equal when Jenkins
// would treat them alike: no plugin="..." attributes, no insignificant whitespace, no empty
// elements (XStream writes an empty collection for what we leave out), and a fixed order of the
// children of the containers whose order Jenkins does not keep, and fields that current Jenkins
// writes out at their default value. Also masks secrets for display: credential ids, tokens, and
// user info in repository addresses, and takes an encrypted trigger token for the one we wrote.
import { createHash } from 'node:crypto';
import { create } from 'xmlbuilder2';
import type { XMLBuilder } from 'xmlbuilder2/lib/interfaces.js';
import { markerOf, tokenFingerprint } from './source.js';

/** Containers whose children Jenkins stores in its own order (descriptor order, sets). */
const UNORDERED = new Set(['properties', 'triggers', 'traits', 'columns']);

/**
 * Fields Jenkins writes with their default value when it re-serialises a config (core 2.568 and
 * 2.555.3 on, AbstractItem.writeConfigDotXml): XStream writes every primitive field, so a field
 * newer than the config that was sent appears. By the class attribute of the parent element.
 */
const ADDED_DEFAULTS: Record<string, Record<string, string>> = {
  // hudson.tasks.LogRotator.removeLastBuild, a boolean since core 2.474.
  'hudson.tasks.LogRotator': { removeLastBuild: 'false' },
};

/** Elements whose text is a secret or a credential reference: masked in diffs. */
const MASKED = new Set(['credentialsId', 'authToken']);

interface Node {
  name: string;
  attributes: [string, string][];
  text: string | undefined;
  children: Node[];
}

/** The normalised form of a config.xml: pretty-printed with two spaces, comparable as a string. */
export function normalizeXml(xml: string, options: { mask?: boolean } = {}): string {
  const root = readTree(parseRoot(xml));
  const out = create({ version: '1.0', encoding: 'UTF-8' });
  if (root) write(out, root, options.mask ?? false);
  return `${out.end({ prettyPrint: true, indent: '  ' })}\n`;
}

/**
 * The root element. Jenkins writes `<?xml version='1.1' ...?>`, which the parser does not take;
 * the declaration says nothing about the content, so it is dropped before parsing.
 */
function parseRoot(xml: string): Element {
  return create(xml.replace(/^\uFEFF?\s*<\?xml[^?]*\?>/, '')).root().node as unknown as Element;
}

function readTree(element: Element): Node | undefined {
  const children: Node[] = [];
  let text = '';
  for (const child of Array.from(element.childNodes)) {
    if (child.nodeType === 1) {
      const node = readTree(child as Element);
      if (node) children.push(node);
    } else if (child.nodeType === 3 || child.nodeType === 4) {
      text += child.nodeValue ?? '';
    }
  }
  const attributes = Array.from(element.attributes)
    .filter((a) => a.name !== 'plugin')
    .map((a): [string, string] => [a.name, a.value])
    .sort(([a], [b]) => a.localeCompare(b));
  const defaults = ADDED_DEFAULTS[element.getAttribute('class') ?? ''];
  if (defaults) {
    const isDefault = (node: Node) => node.children.length === 0 && node.attributes.length === 0 && defaults[node.name] === node.text;
    children.splice(0, children.length, ...children.filter((node) => !isDefault(node)));
  }
  if (UNORDERED.has(element.nodeName)) children.sort((a, b) => a.name.localeCompare(b.name));
  // Whitespace alone is indentation, never a value Jenkins reads. Line ends as an XML parser
  // reads them (XML 1.0, 2.11): a CR LF we send is stored by Jenkins as LF.
  const leafText = children.length === 0 && text.trim() !== '' ? text.replace(/\r\n?/g, '\n') : undefined;
  if (children.length === 0 && attributes.length === 0 && leafText === undefined) return undefined;
  return { name: element.nodeName, attributes, text: leafText, children };
}

function write(parent: XMLBuilder, node: Node, mask: boolean): void {
  const element = parent.ele(node.name, Object.fromEntries(node.attributes));
  if (node.text !== undefined) element.txt(mask ? maskedText(node.name, node.text) : node.text);
  for (const child of node.children) write(element, child, mask);
}

/**
 * Secrets of an element: the whole text of a credential element, and the user info of every
 * address in a text (a repository's, or one inside an inline script or a description).
 */
function maskedText(name: string, text: string): string {
  if (MASKED.has(name)) return masked(text);
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)([^@/\s"']+)@/gi, (_, scheme: string, userInfo: string) => `${scheme}${masked(userInfo)}@`);
}

/**
 * `****` plus a short digest: a changed secret still shows as a changed line in a diff, and
 * the digest of an id or a random token tells nothing about its value.
 */
function masked(secret: string): string {
  return `****${createHash('sha256').update(secret).digest('hex').slice(0, 6)}`;
}

// hudson.util.Secret.getEncryptedValue: `{` + base64 of version 1, lengths, IV, AES-CBC data + `}`.
const ENCRYPTED_TOKEN = /<authToken>\{[A-Za-z0-9+/]+={0,2}\}<\/authToken>/;

/**
 * The live config with an encrypted trigger token replaced by the file's token when the marker
 * Jenkins holds records that very token (by its fingerprint): Jenkins gives the token back
 * encrypted with a fresh IV, so it can never be compared as text. Any other live config is
 * returned as it is, so a changed token, or a marker written before fingerprints, is an update.
 */
export function withKnownToken(live: string, desired: string): string {
  if (!ENCRYPTED_TOKEN.test(live)) return live;
  const wanted = rootChildText(desired, 'authToken');
  const recorded = markerOf(rootChildText(live, 'description'))?.tokenFingerprint;
  if (wanted === undefined || recorded === undefined || recorded !== tokenFingerprint(wanted)) return live;
  const escaped = wanted.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  return live.replace(ENCRYPTED_TOKEN, () => `<authToken>${escaped}</authToken>`);
}

/** The text of a direct child of the root element, if there is one. */
function rootChildText(xml: string, name: string): string | undefined {
  const child = Array.from(parseRoot(xml).childNodes).find((node) => node.nodeType === 1 && node.nodeName === name);
  return child?.textContent ?? undefined;
}

/** Normalised configs that differ only in what Jenkins ignores are equal. */
export function sameConfig(a: string, b: string): boolean {
  return normalizeXml(a) === normalizeXml(b);
}
