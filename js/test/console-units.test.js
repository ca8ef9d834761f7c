// The console's pure parts, in Node (no browser, no component): the locator that finds where a
// JSON pointer's value is in the schema editor's text, the Markdown the manuals are shown in,
// and which boxes the page view draws where. test/console.test.js drives the whole console in
// Chromium.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { jsonErrorOffset, locate, pieces } from '../../console/locate.js';
import { inline, parseMarkdown, renderMarkdown } from '../../console/markdown.js';
import { boxPlace, pageBoxes } from '../../console/pages.js';

/** The text `locate` finds for `pointer`, or null. */
const found = (text, pointer) => {
  const range = locate(text, pointer);
  return range && text.slice(range[0], range[1]);
};

/** Every pointer into `value` (RFC 6901), with the value there. */
function* pointers(value, pointer = '') {
  yield [pointer, value];
  if (value === null || typeof value !== 'object') return;
  const entries = Array.isArray(value) ? value.map((item, i) => [String(i), item]) : Object.entries(value);
  for (const [key, child] of entries) {
    yield* pointers(child, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
  }
}

describe('locate', () => {
  const schema = JSON.stringify(
    { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integr' } }, required: ['name'] },
    null,
    2,
  );

  test('finds a nested value where it is typed, as the editor selects it', () => {
    const range = locate(schema, '/properties/age/type');
    assert.equal(schema.slice(...range), '"integr"');
    assert.equal(schema.slice(0, range[0]).split('\n').length, 8, 'the line the console names');
    assert.equal(found(schema, '/properties/name'), '{\n      "type": "string"\n    }');
  });

  test('the root pointer is the whole document, without the space around it', () => {
    assert.deepEqual(locate(` \n\t${schema}\n `, ''), [3, 3 + schema.length]);
    assert.equal(found('42', ''), '42');
  });

  test('array elements by index, in nested arrays and objects in arrays', () => {
    const text = JSON.stringify({
      required: ['a', 'b'],
      matrix: [
        [1, 2],
        [3, [4, 5]],
      ],
      items: [{ x: true }, {}],
    });
    assert.equal(found(text, '/required/0'), '"a"');
    assert.equal(found(text, '/required/1'), '"b"');
    assert.equal(found(text, '/matrix/1/1/0'), '4');
    assert.equal(found(text, '/items/0/x'), 'true');
    assert.equal(found(text, '/items/1'), '{}');
    assert.equal(found('[[], [ ], {}]', '/1'), '[ ]');
  });

  test('~1 and ~0 in a pointer are / and ~ in the key, in that order', () => {
    const text = JSON.stringify({ 'a/b': 1, 'm~n': 2, '~1': 3, '/': 4, '': 5, 'a~/b': 6 }, null, 2);
    assert.equal(found(text, '/a~1b'), '1');
    assert.equal(found(text, '/m~0n'), '2');
    assert.equal(found(text, '/~01'), '3', '~01 is the key "~1", not "/"');
    assert.equal(found(text, '/~1'), '4');
    assert.equal(found(text, '/'), '5', 'the empty key');
    assert.equal(found(text, '/a~0~1b'), '6');
    assert.equal(locate(text, '/a/b'), null, 'a/b is one key, not a path');
  });

  test('strings holding braces, brackets, commas, colons, quotes and backslashes do not mislead it', () => {
    const value = {
      '{"key": [1]}': 'not a key',
      tricky: '}{][,:"\\',
      ends: 'backslash\\',
      after: { deep: 'found' },
    };
    const text = JSON.stringify(value, null, 2);
    assert.equal(found(text, '/tricky'), JSON.stringify(value.tricky));
    assert.equal(found(text, '/ends'), JSON.stringify(value.ends));
    assert.equal(found(text, '/after/deep'), '"found"');
    assert.equal(found(text, '/{"key": [1]}'), '"not a key"');
  });

  test('offsets are UTF-16 units, as a textarea counts them, past accents and emoji', () => {
    const text = '{"é😀": "ü🎉", "next": [1, "𝄞"], "last": 0}';
    assert.deepEqual(locate(text, '/é😀'), [8, 13]);
    assert.equal(found(text, '/é😀'), '"ü🎉"');
    assert.equal(found(text, '/next/1'), '"𝄞"');
    assert.equal(found(text, '/last'), '0');
  });

  test('keys written with escapes match the pointer to the key they stand for', () => {
    const text = '{"caf\\u00e9": 1, "tab\\there": 2, "quote\\"d": 3}';
    assert.equal(found(text, '/café'), '1');
    assert.equal(found(text, '/tab\there'), '2');
    assert.equal(found(text, '/quote"d'), '3');
  });

  test('any layout: minified, tabs, CRLF line ends', () => {
    const value = { a: [1, { b: null }], c: 'd' };
    for (const text of [
      JSON.stringify(value),
      JSON.stringify(value, null, '\t'),
      JSON.stringify(value, null, 2).replaceAll('\n', '\r\n'),
    ]) {
      assert.equal(found(text, '/a/1/b'), 'null');
      assert.equal(found(text, '/c'), '"d"');
    }
  });

  test('every pointer into a document finds exactly its value', () => {
    const value = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        'a/b': { type: ['string', 'null'], enum: ['x', '{', '"'] },
        'c~d': { type: 'array', items: { type: 'number', minimum: -1.5e3 } },
        ünïcode: { const: '✓ 😀' },
        nested: { properties: { deeper: { properties: { deepest: { default: [[], {}, [[true]]] } } } } },
      },
      required: ['a/b', 'c~d'],
      additionalProperties: false,
    };
    for (const text of [JSON.stringify(value), JSON.stringify(value, null, 2), JSON.stringify(value, null, 4)]) {
      let count = 0;
      for (const [pointer, expected] of pointers(value)) {
        const range = locate(text, pointer);
        assert.ok(range, `${pointer} not found`);
        assert.deepEqual(JSON.parse(text.slice(...range)), expected, pointer);
        count++;
      }
      assert.ok(count > 30);
    }
  });

  test('a key given twice is found where JSON.parse takes it from: the last one', () => {
    assert.equal(found('{"a": 1, "a": 2}', '/a'), '2');
  });

  test('null for a pointer to nothing', () => {
    const text = JSON.stringify({ a: { b: [10, 20] }, s: 'text', n: 1 }, null, 2);
    assert.equal(locate(text, '/missing'), null);
    assert.equal(locate(text, '/a/c'), null);
    assert.equal(locate(text, '/a/b/2'), null, 'past the end');
    assert.equal(locate(text, '/a/b/-'), null, 'the end of an array is no value');
    assert.equal(locate(text, '/a/b/01'), null, 'no leading zeros');
    assert.equal(locate(text, '/s/0'), null, 'into a string');
    assert.equal(locate(text, '/n/x'), null, 'into a number');
    assert.equal(locate(text, 'a'), null, 'not a pointer: no leading /');
    assert.equal(locate(text, '#/a'), null, 'a URI fragment is not a pointer');
  });

  test('text that is not JSON gives null and never hangs', () => {
    // `[}` used to loop forever: a stray closer was read as an empty value, again and again.
    for (const text of ['', '   ', '[}', '[,]', '{"a" 1}', '{a: 1}', '{"a":}', ']', '}', '"open', '{"a": [1, }']) {
      assert.equal(locate(text, '/a'), null, JSON.stringify(text));
      assert.equal(locate(text, '/0'), null, JSON.stringify(text));
    }
  });
});

describe('jsonErrorOffset', () => {
  const offsetOf = (text) => {
    try {
      JSON.parse(text);
    } catch (error) {
      return jsonErrorOffset(error.message, text);
    }
    assert.fail(`${text} parsed`);
  };

  test("reads this engine's own message: the offset of the mistake", () => {
    const text = '{\n  "a": 1,\n}';
    assert.equal(text[offsetOf(text)], '}');
    const array = '[1, 2 3]';
    assert.equal(array[offsetOf(array)], '3');
  });

  test('reads "position N" (V8, JavaScriptCore) and "line L column C" (Firefox)', () => {
    assert.equal(jsonErrorOffset('Unexpected token } in JSON at position 12', 'ignored'), 12);
    const text = '{\n  "a": 1,\n}';
    const firefox = 'JSON.parse: expected double-quoted property name at line 3 column 1 of the JSON data';
    assert.equal(jsonErrorOffset(firefox, text), text.lastIndexOf('}'));
    assert.equal(jsonErrorOffset('JSON.parse: unexpected character at line 1 column 3 of the JSON data', '[1x]'), 2);
  });

  test('null when the message says nothing of where', () => {
    assert.equal(jsonErrorOffset('Unexpected end of JSON input', '{'), null);
  });
});

/** The tags a manual may come out as. */
const TAGS = new Set(['h3', 'h4', 'h5', 'h6', 'p', 'ul', 'ol', 'li', 'pre', 'code', 'strong', 'em']);

/** Every tag in a parsed tree. */
const tagsOf = (nodes) =>
  nodes.flatMap((node) => (typeof node === 'string' ? [] : [node.tag, ...tagsOf(node.children)]));

/** A document just big enough for `renderMarkdown`: elements, text nodes, and no way to add markup. */
function fakeDocument() {
  const created = [];
  class Element {
    constructor(tag) {
      this.tag = tag;
      this.childNodes = [];
      this.ownerDocument = document;
    }
    append(...nodes) {
      for (const node of nodes) this.childNodes.push(typeof node === 'string' ? { text: node } : node);
    }
    replaceChildren(...nodes) {
      this.childNodes = [];
      this.append(...nodes);
    }
    set innerHTML(_) {
      throw new Error('markup was written');
    }
    set outerHTML(_) {
      throw new Error('markup was written');
    }
    insertAdjacentHTML() {
      throw new Error('markup was written');
    }
  }
  const document = {
    created,
    createElement(tag) {
      created.push(tag);
      return new Element(tag);
    },
  };
  return document;
}

const escapeText = (text) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** The markup a browser would serialise the fake tree to: text nodes escaped. */
const html = (node) =>
  'text' in node ? escapeText(node.text) : `<${node.tag}>${node.childNodes.map(html).join('')}</${node.tag}>`;

/** `markdown` rendered into a fresh element, as the markup a browser would show for it. */
function rendered(markdown) {
  const document = fakeDocument();
  const into = document.createElement('div');
  renderMarkdown(markdown, into);
  return into.childNodes.map(html).join('');
}

describe('Markdown', () => {
  test("headings: # is h3, below the console's own headings, down to h6", () => {
    assert.deepEqual(parseMarkdown('# One\n## Two\n### Three\n#### Four\n##### Five\n###### Six'), [
      { tag: 'h3', children: ['One'] },
      { tag: 'h4', children: ['Two'] },
      { tag: 'h5', children: ['Three'] },
      { tag: 'h6', children: ['Four'] },
      { tag: 'h6', children: ['Five'] },
      { tag: 'h6', children: ['Six'] },
    ]);
    assert.equal(rendered('#\tTabbed **title**'), '<h3>Tabbed <strong>title</strong></h3>');
  });

  test('a # with no space after it, or seven of them, is text: it neither heads nor ends a paragraph', () => {
    assert.equal(rendered('#hashtag'), '<p>#hashtag</p>');
    assert.equal(rendered('####### seven'), '<p>####### seven</p>');
    assert.equal(rendered('see\n#hashtag\nand more'), '<p>see #hashtag and more</p>');
  });

  test('emphasis, strong and code spans', () => {
    assert.deepEqual(inline('a **b** c *d* e `f` g'), [
      'a ',
      { tag: 'strong', children: ['b'] },
      ' c ',
      { tag: 'em', children: ['d'] },
      ' e ',
      { tag: 'code', children: ['f'] },
      ' g',
    ]);
    assert.deepEqual(inline('`a *b* **c**`'), [{ tag: 'code', children: ['a *b* **c**'] }], 'no emphasis in code');
    assert.deepEqual(inline('2 * 3 and a lone ` tick'), ['2 * 3 and a lone ` tick']);
    assert.deepEqual(inline(''), []);
    assert.equal(
      rendered('**bold** at the start, *em* at the end'),
      '<p><strong>bold</strong> at the start, <em>em</em> at the end</p>',
    );
  });

  test('fenced code keeps its lines verbatim: no Markdown, no markup inside', () => {
    const markdown =
      'Before\n```json\n{ "a": "**not bold**" }\n<script>alert(1)</script>\n  # not a heading\n```\nAfter';
    assert.deepEqual(parseMarkdown(markdown), [
      { tag: 'p', children: ['Before'] },
      {
        tag: 'pre',
        children: [
          { tag: 'code', children: ['{ "a": "**not bold**" }\n<script>alert(1)</script>\n  # not a heading'] },
        ],
      },
      { tag: 'p', children: ['After'] },
    ]);
    assert.match(
      rendered(markdown),
      /<pre><code>\{ "a": "\*\*not bold\*\*" \}\n&lt;script&gt;alert\(1\)&lt;\/script&gt;/,
    );
  });

  test('an empty fence is an empty code block; an unclosed one runs to the end', () => {
    assert.deepEqual(parseMarkdown('```\n```'), [{ tag: 'pre', children: [{ tag: 'code', children: [] }] }]);
    assert.equal(rendered('```\nline 1\n\nline 3'), '<pre><code>line 1\n\nline 3</code></pre>');
  });

  test('lists: - and * are unordered, 1. is ordered, items carry inline Markdown', () => {
    assert.equal(rendered('- one\n* two\n  - three'), '<ul><li>one</li><li>two</li><li>three</li></ul>');
    assert.equal(rendered('1. first\n2. `second`'), '<ol><li>first</li><li><code>second</code></li></ol>');
    assert.equal(
      rendered('# Person\n- **name** is always given\n- `age` in years'),
      '<h3>Person</h3><ul><li><strong>name</strong> is always given</li><li><code>age</code> in years</li></ul>',
      'what test/console.test.js types in the editor',
    );
    assert.equal(rendered('- a\n\n1. b'), '<ul><li>a</li></ul><ol><li>b</li></ol>');
    assert.equal(
      rendered('-not an item\n**bold** is not an item'),
      '<p>-not an item <strong>bold</strong> is not an item</p>',
    );
  });

  test('paragraphs: lines joined, a blank line, a heading, a list or a fence ends one; CRLF too', () => {
    assert.equal(rendered('one\ntwo\n\nthree'), '<p>one two</p><p>three</p>');
    assert.equal(rendered('text\n# Heading'), '<p>text</p><h3>Heading</h3>');
    assert.equal(rendered('text\n- item'), '<p>text</p><ul><li>item</li></ul>');
    assert.equal(rendered('text\n```\ncode\n```'), '<p>text</p><pre><code>code</code></pre>');
    assert.equal(rendered('one\r\ntwo\r\n\r\nthree\rfour'), '<p>one two</p><p>three four</p>');
    assert.deepEqual(parseMarkdown(''), []);
    assert.deepEqual(parseMarkdown('\n  \n\t\n'), []);
  });

  test('links are not made, above all not javascript: ones: they stay the text they were written as', () => {
    for (const markdown of [
      '[click](javascript:alert(1))',
      '[site](https://example.com "title")',
      '<javascript:alert(1)>',
      '<a href="javascript:alert(1)">x</a>',
      '![image](javascript:alert(1))',
      '[ref]: javascript:alert(1)',
    ]) {
      const tree = parseMarkdown(markdown);
      assert.deepEqual(tree, [{ tag: 'p', children: [markdown] }], markdown);
      assert.doesNotMatch(rendered(markdown), /<a[\s>]|<img/);
    }
  });

  test('HTML in a manual comes out as text, escaped, wherever it is', () => {
    assert.equal(rendered('<script>alert(1)</script>'), '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>');
    assert.equal(rendered('# <script>x</script>'), '<h3>&lt;script&gt;x&lt;/script&gt;</h3>');
    assert.equal(rendered('- **<b>bold</b>**'), '<ul><li><strong>&lt;b&gt;bold&lt;/b&gt;</strong></li></ul>');
    assert.equal(rendered('`<img src=x onerror=alert(1)>`'), '<p><code>&lt;img src=x onerror=alert(1)&gt;</code></p>');
    // The hostile manual test/console.test.js registers.
    const hostile = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script> **really** <b>bold</b>';
    assert.equal(
      rendered(hostile),
      '<p>&lt;img src=x onerror="window.pwned=1"&gt;&lt;script&gt;window.pwned=2&lt;/script&gt; ' +
        '<strong>really</strong> &lt;b&gt;bold&lt;/b&gt;</p>',
    );
  });

  test('only its own tags are ever made, whatever the input', () => {
    const inputs = [
      '<script>alert(1)</script>',
      '<iframe src="javascript:alert(1)"></iframe>\n# <style>*{}</style>',
      '- <a href=x>a</a>\n1. <svg onload=alert(1)>',
      '```\n<object data=x>\n```\n**<embed>** *<form>* `<input>`',
      '<div>\n\n</div>\n\n<table><tr><td>x</td></tr></table>',
    ];
    for (const markdown of inputs) {
      for (const tag of tagsOf(parseMarkdown(markdown))) assert.ok(TAGS.has(tag), `${tag} from ${markdown}`);
      const document = fakeDocument();
      renderMarkdown(markdown, document.createElement('div'));
      for (const tag of document.created.slice(1)) assert.ok(TAGS.has(tag), `${tag} created from ${markdown}`);
    }
  });

  test('rendering replaces what the element held', () => {
    const document = fakeDocument();
    const into = document.createElement('div');
    renderMarkdown('# First', into);
    renderMarkdown('second', into);
    assert.equal(into.childNodes.map(html).join(''), '<p>second</p>');
    renderMarkdown('', into);
    assert.deepEqual(into.childNodes, []);
  });
});

describe('the page view', () => {
  const box = (page, x0, top, x1, bottom) => ({ page, x0, top, x1, bottom });

  test("each page's boxes, one per place, naming every value drawn there", () => {
    const sources = [
      { pointer: '/name', match: 'exact', boxes: [box(1, 72, 100, 150, 112)] },
      // A value over a line break: a box per line, here across a page break too.
      { pointer: '/address', match: 'normalized', boxes: [box(1, 300, 700, 540, 712), box(2, 72, 72, 120, 84)] },
      // Another value at the very same place (a name that is also the signatory).
      { pointer: '/signatory', match: 'normalized', boxes: [box(1, 72, 100, 150, 112)] },
      // Derived values and text inputs have no boxes.
      { pointer: '/total', match: 'derived' },
      { pointer: '/note', match: 'exact', utf16Start: 0, utf16End: 4 },
    ];
    const pages = pageBoxes(sources);
    assert.deepEqual([...pages.keys()], [1, 2]);
    assert.deepEqual(
      pages.get(1).map(({ pointers, matches, x0 }) => ({ pointers, matches, x0 })),
      [
        { pointers: ['/name', '/signatory'], matches: ['exact', 'normalized'], x0: 72 },
        { pointers: ['/address'], matches: ['normalized'], x0: 300 },
      ],
    );
    assert.deepEqual(pages.get(2), [{ ...box(2, 72, 72, 120, 84), pointers: ['/address'], matches: ['normalized'] }]);
    assert.equal(pageBoxes([]).size, 0);
  });

  test('a box is placed in percent of its page, cut to the page', () => {
    const letter = { width: 612, height: 792 };
    assert.deepEqual(boxPlace(box(1, 61.2, 79.2, 306, 118.8), letter), { left: 10, top: 10, width: 40, height: 5 });
    // A rotated page is wider than high; the boxes are measured on it as shown.
    assert.deepEqual(boxPlace(box(1, 396, 0, 792, 306), { width: 792, height: 612 }), {
      left: 50,
      top: 0,
      width: 50,
      height: 50,
    });
    assert.deepEqual(boxPlace(box(1, -10, 780, 700, 800), letter), { left: 0, top: 98.48, width: 100, height: 1.52 });
    assert.deepEqual(boxPlace(box(1, 50, 50, 40, 40), letter), { left: 8.17, top: 6.31, width: 0, height: 0 });
  });
});

test("a text is cut at every span's ends, each piece with the spans covering it", () => {
  const spans = [
    { pointer: '/a', utf16Start: 1, utf16End: 4 },
    { pointer: '/b', utf16Start: 3, utf16End: 5 },
    { pointer: '/derived' },
  ];
  const cut = pieces('abcdefg', spans).map(({ start, end, covering }) => [
    start,
    end,
    covering.map((span) => span.pointer),
  ]);
  assert.deepEqual(cut, [
    [0, 1, []],
    [1, 3, ['/a']],
    [3, 4, ['/a', '/b']],
    [4, 5, ['/b']],
    [5, 7, []],
  ]);
});
