// Where things are in the JSON the schema editor holds, so that a mistake is shown (and
// selected) where it is typed. Pure functions of strings: js/test/console-units.test.js tests them
// in Node.

/** The reference tokens of a JSON pointer (RFC 6901), or null when it is not one. */
export function tokens(pointer) {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return null;
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/**
 * Where the value at JSON `pointer` is in `text` ([start, end] in UTF-16 units), or null: a
 * small parser that notes each value's place, for a mistake shown where it is typed. It reads
 * the JSON `JSON.parse` accepted; on anything else it answers null or a best guess, and always
 * returns.
 */
export function locate(text, pointer) {
  const wanted = tokens(pointer);
  if (wanted === null) return null;
  let at = 0;
  const fail = () => {
    throw new SyntaxError(`not JSON at ${at}`);
  };
  const space = () => {
    while (/\s/.test(text[at] ?? '')) at++;
  };
  const string = () => {
    if (text[at] !== '"') fail();
    const start = at++;
    while (at < text.length && text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
    at++;
    return JSON.parse(text.slice(start, at));
  };
  const value = (path) => {
    space();
    const start = at;
    const here = path.length === wanted.length && path.every((part, i) => part === wanted[i]);
    const inside = path.every((part, i) => part === wanted[i]);
    let found = null;
    if (text[at] === '{') {
      at++;
      space();
      while (text[at] !== '}' && at < text.length) {
        space();
        const key = string();
        space();
        if (text[at] !== ':') fail();
        at++;
        const hit = value([...path, key]);
        if (inside && hit) found = hit;
        space();
        if (text[at] === ',') at++;
        space();
      }
      at++;
    } else if (text[at] === '[') {
      at++;
      let index = 0;
      space();
      while (text[at] !== ']' && at < text.length) {
        const hit = value([...path, String(index++)]);
        if (inside && hit) found = hit;
        space();
        if (text[at] === ',') at++;
        space();
      }
      at++;
    } else if (text[at] === '"') {
      string();
    } else {
      while (at < text.length && !/[\s,\]}]/.test(text[at])) at++;
      // Nothing read (a stray `]`, `}` or `,`, or the end): not JSON, and no way forward.
      if (at === start) fail();
    }
    return here ? [start, at] : found;
  };
  try {
    return value([]);
  } catch {
    return null;
  }
}

/**
 * Where a `JSON.parse` error `message` about `text` says the mistake is (a UTF-16 offset), or
 * null: from "position N" (V8, JavaScriptCore) or "line L column C" (Firefox).
 */
export function jsonErrorOffset(message, text) {
  const position = /position (\d+)/.exec(message);
  if (position) return Number(position[1]);
  const lineColumn = /line (\d+) column (\d+)/.exec(message);
  if (!lineColumn) return null;
  const lines = text.split('\n').slice(0, Number(lineColumn[1]) - 1);
  return lines.reduce((sum, line) => sum + line.length + 1, 0) + Number(lineColumn[2]) - 1;
}

/**
 * `text` cut at every span's ends (`utf16Start`, `utf16End`: a result's sources), each piece
 * with the spans that cover it: `{ start, end, covering }`, in order. What the console marks a
 * value's place in a text with.
 */
export function pieces(text, spans) {
  const placed = spans.filter((span) => span.utf16Start !== undefined && span.utf16End > span.utf16Start);
  const ends = placed.flatMap((span) => [span.utf16Start, span.utf16End]);
  const cuts = [...new Set([0, text.length, ...ends])].sort((a, b) => a - b);
  const found = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const [start, end] = [cuts[i], cuts[i + 1]];
    found.push({ start, end, covering: placed.filter((span) => span.utf16Start <= start && span.utf16End >= end) });
  }
  return found;
}
