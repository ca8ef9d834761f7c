// Markdown for schema manuals, as text nodes: headings, lists, fenced code blocks, paragraphs,
// `code`, **strong** and *em*. Nothing else is Markdown here: links, images and HTML stay the
// text they were written as, and every piece of the manual goes into the page as a text node,
// never as markup, so a hostile manual stays text. `parseMarkdown` is a pure function
// (js/test/console-units.test.js tests it in Node); `renderMarkdown` puts its tree in the page.

const FENCE = '```';
const HEADING = /^#{1,6}\s/;
const ITEM = /^\s*([-*]|\d+\.)\s/;
const INLINE = /`([^`]+)`|\*\*([^*]+)\*\*|\*([^*]+)\*/g;

/** A node of the tree: `{ tag, children }`, each child a node or a non-empty string (text). */
const node = (tag, ...children) => ({ tag, children: children.filter((child) => child !== '') });

/** Whether `line` ends the paragraph before it: a fence, a heading or a list item. */
const startsBlock = (line) => line.startsWith(FENCE) || HEADING.test(line) || ITEM.test(line);

/** `text`'s `code`, **strong** and *em*, as strings and nodes. */
export function inline(text) {
  const parts = [];
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    parts.push(text.slice(last, match.index));
    if (match[1] !== undefined) parts.push(node('code', match[1]));
    else if (match[2] !== undefined) parts.push(node('strong', match[2]));
    else parts.push(node('em', match[3]));
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  return parts.filter((part) => part !== '');
}

/**
 * `markdown` as a list of blocks (`h3`–`h6`, `ul`, `ol`, `pre`, `p`): `#` is `h3`, below the
 * console's own headings.
 */
export function parseMarkdown(markdown) {
  const blocks = [];
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith(FENCE)) {
      const code = [];
      while (++i < lines.length && !lines[i].startsWith(FENCE)) code.push(lines[i]);
      blocks.push(node('pre', node('code', code.join('\n'))));
    } else if (HEADING.test(line)) {
      const level = Math.min(6, /^#+/.exec(line)[0].length + 2);
      blocks.push(node(`h${level}`, ...inline(line.replace(/^#+\s*/, ''))));
    } else if (ITEM.test(line)) {
      const ordered = /^\s*\d+\./.test(line);
      const items = [];
      while (i < lines.length && ITEM.test(lines[i])) items.push(node('li', ...inline(lines[i++].replace(ITEM, ''))));
      i--;
      blocks.push(node(ordered ? 'ol' : 'ul', ...items));
    } else if (line.trim()) {
      const paragraph = [line];
      while (i + 1 < lines.length && lines[i + 1].trim() && !startsBlock(lines[i + 1])) paragraph.push(lines[++i]);
      blocks.push(node('p', ...inline(paragraph.join(' '))));
    }
  }
  return blocks;
}

/** Renders `markdown` into the element `into`: elements for the tree's nodes, text nodes for its strings. */
export function renderMarkdown(markdown, into) {
  const document = into.ownerDocument;
  const build = (tree) => {
    if (typeof tree === 'string') return tree; // append() makes a string a text node
    const element = document.createElement(tree.tag);
    element.append(...tree.children.map(build));
    return element;
  };
  into.replaceChildren(...parseMarkdown(markdown).map(build));
}
