// Turns a record's Markdown description into safe DOM: marked renders, DOMPurify keeps only plain
// document markup. Loaded on first use, so the list itself does not wait for it.
import DOMPurify from 'dompurify';
import { marked } from 'marked';

const ALLOWED_TAGS = [
  'a', 'abbr', 'b', 'blockquote', 'br', 'code', 'dd', 'del', 'details', 'dl', 'dt', 'em',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'img', 'input', 'kbd', 'li', 'ol', 'p', 'pre',
  's', 'samp', 'strong', 'sub', 'summary', 'sup', 'table', 'tbody', 'td', 'th', 'thead', 'tr', 'ul',
];
/** No `style`, `class`, `id` or event handlers: a description cannot restyle or script the page. */
const ALLOWED_ATTR = ['href', 'title', 'alt', 'src', 'align', 'start', 'colspan', 'rowspan', 'type', 'checked', 'disabled'];
/** http(s), mailto and relative addresses; everything else (javascript:, data:, vbscript:) is dropped. */
const ALLOWED_URI_REGEXP = /^(?:https?:|mailto:|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i;
const BLOCKED_IMAGE = 'data-blocked-src';

function sameOrigin(address: string): boolean {
  try {
    return new URL(address, document.baseURI).origin === window.location.origin;
  } catch {
    return false;
  }
}

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node instanceof Element && node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
  // The page loads nothing from other servers: a remote image becomes a link to it.
  if (node instanceof Element && node.tagName === 'IMG') {
    const src = node.getAttribute('src');
    if (src !== null && !sameOrigin(src)) {
      node.removeAttribute('src');
      node.setAttribute(BLOCKED_IMAGE, src);
    }
  }
  // Task-list boxes from GFM stay read-only.
  if (node instanceof Element && node.tagName === 'INPUT') {
    node.setAttribute('type', 'checkbox');
    node.setAttribute('disabled', '');
  }
});

export function renderMarkdown(source: string): DocumentFragment {
  const html = marked.parse(source, { async: false, gfm: true });
  const fragment = DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOWED_URI_REGEXP,
    ALLOW_DATA_ATTR: false,
    RETURN_DOM_FRAGMENT: true,
  });
  for (const image of fragment.querySelectorAll(`img[${BLOCKED_IMAGE}]`)) {
    image.replaceWith(imageLink(image.getAttribute(BLOCKED_IMAGE) ?? '', image.getAttribute('alt')));
  }
  // A same-origin image that cannot be loaded (`<img src=x>`) would show the browser's broken-image
  // icon: it becomes the same link as a remote image instead.
  for (const image of fragment.querySelectorAll('img')) {
    image.addEventListener('error', () => image.replaceWith(imageLink(image.getAttribute('src') ?? '', image.getAttribute('alt'))), { once: true });
  }
  return fragment;
}

/** `image: <alt or address>`, a link to the image when it is a web address. */
function imageLink(address: string, alt: string | null): HTMLAnchorElement {
  const link = document.createElement('a');
  link.textContent = `image: ${alt || address}`;
  if (/^https?:/i.test(address) || (address && sameOrigin(address))) {
    link.href = address;
    link.target = '_blank';
    link.rel = 'noopener noreferrer nofollow';
  }
  return link;
}
