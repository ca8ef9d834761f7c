// The web console (/console) in headless Chromium (Debian's `chromium`, driven by
// playwright-core) against `structure serve` (the real host and component, built by cargo) and
// the mock LLM: sign in; a schema with a mistake shown at its pointer, fixed and saved; a stale
// edit refused; a hostile manual kept as text; the playground's highlights covering exactly
// each source's span; a PDF's pages drawn with each value's boxes; insights counting the calls;
// the main flows by keyboard alone. Leaves screenshots in test-results/console-*.png.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { answer, completion, startMockLlm } from './mock-llm.js';

const CHROMIUM = process.env.STRUCTURE_CHROMIUM ?? '/usr/bin/chromium';
const results = fileURLToPath(new URL('../test-results/', import.meta.url));
const workspace = fileURLToPath(new URL('../..', import.meta.url));
const TOKENS = [
  { token: 'console-admin', tenant: 'acme', role: 'admin' },
  { token: 'console-user', tenant: 'acme', role: 'user' },
  { token: 'console-reviewer', tenant: 'acme', role: 'reviewer', name: 'Dorothy Vaughan' },
];

const WEBHOOK_SECRET = 'console-webhook-secret';

let mock;
let webhook;
let server;
let base;
let context;
let profile;
let page;

/** `structure serve` on a free port, as the README runs it. */
async function startServer(llmBaseUrl, webhookUrl) {
  execFileSync('cargo', ['build', '--quiet', '--package', 'structure-host', '--bin', 'structure'], {
    cwd: workspace,
    stdio: 'inherit',
  });
  const targetDir = process.env.CARGO_TARGET_DIR ?? join(workspace, 'target');
  const env = {
    ...process.env,
    STRUCTURE_API_TOKENS: JSON.stringify(TOKENS),
    STRUCTURE_MODEL: 'openai/gpt-4.1-mini',
    OPENAI_BASE_URL: llmBaseUrl,
    OPENAI_API_KEY: 'sk-console-test',
    STRUCTURE_REVIEW: 'doubtful',
    STRUCTURE_REVIEW_WEBHOOK: webhookUrl,
    STRUCTURE_REVIEW_WEBHOOK_SECRET: WEBHOOK_SECRET,
  };
  const child = spawn(
    join(targetDir, 'debug', 'structure'),
    ['--store', 'memory', 'serve', '--listen', '127.0.0.1:0'],
    { env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const lines = createInterface({ input: child.stderr });
  const [line] = await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(([code]) => Promise.reject(new Error(`structure serve exited with ${code}`))),
  ]);
  const address = line.match(/serving (http:\/\/\S+)/)?.[1];
  if (!address) throw new Error(`structure serve said ${JSON.stringify(line)}`);
  return { child, address };
}

/** The receiver of reviewed results: keeps each delivery's headers and body; `next(id)` waits for the item's. */
async function startWebhook() {
  const deliveries = [];
  const waiting = [];
  const receiver = createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      deliveries.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(204).end();
      for (const wake of waiting.splice(0)) wake();
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const next = async (id, within = 15_000) => {
    const until = Date.now() + within;
    for (;;) {
      const found = deliveries.find((delivery) => delivery.headers['x-structure-delivery'] === id);
      if (found) return found;
      const left = until - Date.now();
      if (left <= 0) throw new Error(`no delivery of ${id} in ${within} ms (${deliveries.length} others)`);
      await new Promise((wake) => {
        waiting.push(wake);
        setTimeout(wake, left);
      });
    }
  };
  return { url: `http://127.0.0.1:${receiver.address().port}/reviewed`, next, stop: () => receiver.close() };
}

/** The API, as an admin, from outside the page (another editor). */
const asAdmin = (path, init = {}) =>
  fetch(`${base}${path}`, {
    ...init,
    headers: { authorization: 'Bearer console-admin', 'content-type': 'application/json', ...(init.headers ?? {}) },
  });

async function signIn(target, token) {
  await target.goto(`${base}/console`);
  await target.waitForSelector('body[data-ready="true"]');
  await target.fill('#token', token);
  await target.press('#token', 'Enter');
  await target.waitForSelector('body[data-signed-in="true"]');
}

async function shot(name) {
  mkdirSync(results, { recursive: true });
  await page.screenshot({ path: join(results, `console-${name}.png`), fullPage: true });
}

/** Waits for the next check of the editor to finish after `action`. */
async function afterCheck(action) {
  const before = Number((await page.getAttribute('body', 'data-checks')) ?? 0);
  await action();
  await page.waitForFunction((n) => Number(document.body.dataset.checks ?? 0) > n, before);
}

before(async () => {
  assert.ok(existsSync(CHROMIUM), `no browser at ${CHROMIUM}: apt-get install chromium, or set STRUCTURE_CHROMIUM`);
  mock = await startMockLlm();
  webhook = await startWebhook();
  server = await startServer(mock.baseUrl, webhook.url);
  base = server.address;
  profile = mkdtempSync(join(tmpdir(), 'structure-console-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
    ],
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.errors = [];
  page.on('pageerror', (error) => page.errors.push(error.message));
  // A refused request (the 409 the test provokes) is logged by the browser itself; anything else is a fault.
  page.on(
    'console',
    (message) =>
      message.type() === 'error' && !/Failed to load resource/.test(message.text()) && page.errors.push(message.text()),
  );
});

after(async () => {
  await context?.close();
  server?.child.kill();
  mock?.stop();
  webhook?.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test('sign in; a schema with a mistake shows it at its pointer; fixed, it saves', async () => {
  await signIn(page, 'console-admin');
  assert.equal(await page.textContent('#who-text'), 'acme · admin');
  assert.ok(!page.url().includes('console-admin'), 'the token is never in a URL');
  assert.deepEqual(await context.cookies(), [], 'no cookies');
  assert.ok(
    (await page.locator('#schemas tbody tr').allTextContents()).some((row) => row.startsWith('contactbundled')),
  );

  await page.click('#new-schema');
  await page.fill('#edit-name', 'person');
  const wrong = JSON.stringify(
    { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integr' } }, required: ['name'] },
    null,
    2,
  );
  await afterCheck(() => page.fill('#edit-schema-json', wrong));
  const problem = page.locator('#problems button[data-pointer="/properties/age/type"]');
  await problem.waitFor();
  assert.match(await page.textContent('#problems'), /\/properties\/age\/type \(line 8\)/);
  await problem.click();
  const selected = await page.$eval('#edit-schema-json', (area) =>
    area.value.slice(area.selectionStart, area.selectionEnd),
  );
  assert.equal(selected, '"integr"', 'the mistake is selected where it is typed');
  await shot('editor-mistake');

  // A rule across fields that does not type-check is a problem at its pointer too, with its line.
  const ruled = JSON.stringify(
    {
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'integer' } },
      'x-structure-rules': [{ rule: 'self.age + self.name > 0' }],
    },
    null,
    2,
  );
  await afterCheck(() => page.fill('#edit-schema-json', ruled));
  await page.locator('#problems button[data-pointer="/x-structure-rules/0/rule"]').waitFor();
  assert.match(
    await page.textContent('#problems'),
    /\/x-structure-rules\/0\/rule \(line 13\)[\s\S]*no matching overload for '_\+_' applied to '\(int, string\)'/,
  );

  await afterCheck(() => page.fill('#edit-schema-json', wrong.replace('"integr"', '"integer"')));
  assert.equal(await page.locator('#problems li').count(), 0, await page.textContent('#problems'));
  await page.fill('#edit-manual', '# Person\n- **name** is always given\n- `age` in years');
  assert.equal(await page.textContent('#manual-preview h3'), 'Person');
  assert.equal(await page.textContent('#manual-preview strong'), 'name');
  await page.click('#save-schema');
  await page.waitForSelector('#schema-view:not([hidden])');
  assert.equal(await page.textContent('#view-name'), 'person');
  assert.equal(await page.textContent('#view-origin'), 'tenant:acme');
  assert.equal(await page.textContent('#view-version'), '1.0');
  await shot('registry');
});

test('an edit made stale by another editor is answered 409 and nothing is overwritten', async () => {
  await page.click('#edit-schema');
  assert.equal(await page.inputValue('#edit-version'), '1.1', 'a minor bump is offered');
  const other = await asAdmin('/v1/schemas/person', {
    method: 'PUT',
    body: JSON.stringify({
      schema: {
        type: 'object',
        properties: { name: { type: 'string' }, age: { type: 'integer' }, email: { type: 'string' } },
        required: ['name'],
      },
      version: '1.1',
      manual: 'theirs',
    }),
  });
  assert.equal(other.status, 200);
  await page.fill('#edit-manual', 'mine');
  await page.click('#save-schema');
  await page.waitForSelector('#edit-status .error');
  assert.match(await page.textContent('#edit-status'), /changed this schema since you opened it/);
  const kept = await (await asAdmin('/v1/schemas/person')).json();
  assert.equal(kept.manual, 'theirs');
  await page.click('#edit-status button');
  await page.waitForSelector('#schema-view:not([hidden])');
  assert.equal(await page.textContent('#view-manual'), 'theirs');
});

test('a hostile manual stays text', async () => {
  const manual = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script> **really** <b>bold</b>';
  const registered = await asAdmin('/v1/schemas/hostile', {
    method: 'PUT',
    body: JSON.stringify({ schema: { type: 'object' }, manual }),
  });
  assert.equal(registered.status, 200);
  await page.reload();
  await page.waitForSelector('body[data-signed-in="true"]');
  await page.click('#schemas button:text-is("hostile")');
  await page.waitForSelector('#schema-view:not([hidden])');
  assert.equal(await page.locator('#view-manual img, #view-manual script, #view-manual b').count(), 0);
  assert.match(await page.textContent('#view-manual'), /<img src=x onerror=/);
  assert.equal(await page.textContent('#view-manual strong'), 'really');
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  const deleting = page.click('#delete-schema');
  await page.waitForSelector('#confirm[open]');
  await page.click('#confirm-ok');
  await deleting;
  await page.waitForFunction(() => document.getElementById('schema-empty').textContent.includes('was deleted'));
  assert.equal((await asAdmin('/v1/schemas/hostile')).status, 404);
});

test('the playground marks each value at exactly its source span, and shows what was fed back', async () => {
  const text = 'Met Ada Lovelace today; write to ada@analytical.example about the engine.';
  const ada = { name: 'Ada Lovelace', email: 'ada@analytical.example' };
  await mock.reply(answer({ ...ada, email: 'ada at analytical' }));
  await mock.reply(answer(ada));
  await page.click('.tab[data-view="playground"]');
  await page.selectOption('#play-schema', 'contact');
  await page.fill('#play-text', text);
  await page.click('#play-run');
  await page.waitForSelector('body[data-runs="1"]');
  assert.equal(await page.textContent('#play-status'), 'ok', await page.textContent('#play-message'));
  assert.equal(await page.textContent('#play-iterations'), '2');
  assert.match(await page.textContent('#play-iteration-list'), /Answer 1 broke 1 rule\(s\)[\s\S]*\/email/);

  // Each value's marks, put together, are exactly the span the text writes it at.
  const marked = await page.$$eval('#play-text-view', ([view]) => {
    const spans = {};
    let offset = 0;
    for (const node of view.childNodes) {
      const length = node.textContent.length;
      if (node.nodeName === 'MARK') {
        for (const pointer of JSON.parse(node.dataset.pointers)) {
          spans[pointer] ??= { start: offset, end: offset, kinds: [] };
          const span = spans[pointer];
          span.end = offset + length;
          span.kinds.push(node.className);
        }
      }
      offset += length;
    }
    return { spans, text: view.textContent };
  });
  assert.equal(marked.text, text);
  for (const [pointer, value] of [
    ['/name', ada.name],
    ['/email', ada.email],
  ]) {
    const start = text.indexOf(value);
    assert.deepEqual([marked.spans[pointer].start, marked.spans[pointer].end], [start, start + value.length], pointer);
    assert.ok(
      marked.spans[pointer].kinds.every((kind) => kind === 'm-exact'),
      pointer,
    );
  }
  await page.hover('#play-data .leaf[data-pointer="/email"]');
  assert.equal(await page.locator('#play-text-view mark.active').textContent(), ada.email);
  await shot('playground');

  await mock.reply(answer({ name: 'Grace Hopper', email: 'grace@navy.example' }));
  await page.fill('#play-text', 'Grace Hopper, grace@navy.example');
  await page.click('#play-run');
  await page.waitForSelector('body[data-runs="2"]');
  assert.equal(await page.textContent('#play-status'), 'ok');

  // Asked for more, the result still shows what the text gave, each value marked where it stands.
  await mock.reply(answer({ records: [{ order: 'ORD-1' }, { order: 'ORD-2' }] }));
  await page.selectOption('#play-schema', '');
  const order = { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] };
  await page.fill('#play-inline', JSON.stringify({ type: 'array', items: order, minItems: 3 }));
  await page.fill('#play-text', 'Orders ORD-1 and ORD-2 shipped.');
  await page.click('#play-run');
  await page.waitForSelector('body[data-runs="3"]');
  assert.equal(await page.textContent('#play-status'), 'need-more-input');
  assert.match(await page.textContent('#play-message'), /at least 3[\s\S]*What it does give is below/);
  await page.hover('#play-data .leaf[data-pointer="/1/order"]');
  assert.equal(await page.locator('#play-text-view mark.active').textContent(), 'ORD-2');
  await shot('playground-partial');

  // A PDF with an inline schema: the values are marked in the text read from its pages.
  const pdf = await mock.pdf(['Purchase order', 'Buyer: Katherine Johnson, Hampton']);
  await mock.reply(answer({ buyer: 'Katherine Johnson' }));
  await page.selectOption('#play-schema', '');
  await page.fill(
    '#play-inline',
    JSON.stringify({ type: 'object', properties: { buyer: { type: 'string' } }, required: ['buyer'] }),
  );
  await page.fill('#play-text', '');
  await page.setInputFiles('#play-document', {
    name: 'order.pdf',
    mimeType: 'application/pdf',
    buffer: Buffer.from(pdf),
  });
  await page.click('#play-run');
  await page.waitForSelector('body[data-runs="4"]');
  assert.equal(await page.textContent('#play-status'), 'ok', await page.textContent('#play-message'));
  assert.equal(await page.textContent('#play-text-view mark'), 'Katherine Johnson');
  assert.match(await page.textContent('#play-text-view'), /Purchase order[\s\S]*Buyer: Katherine Johnson/);
  assert.match((await mock.requests()).at(-1).body, /Katherine Johnson/, 'the model read the PDF');

  // A Word document and a web page, picked the same way: their text marked, no page view.
  const docx = await mock.docx(['Purchase order', 'Buyer: Mary Jackson, Hampton']);
  const html = '<!doctype html><h1>Purchase order</h1><p>Buyer: Dorothy&nbsp;Vaughan</p><script>x()</script>';
  const files = [
    ['order.docx', Buffer.from(docx), 'Mary Jackson'],
    ['order.html', Buffer.from(html), 'Dorothy\u00a0Vaughan'],
  ];
  for (const [index, [name, buffer, buyer]] of files.entries()) {
    await mock.reply(answer({ buyer }));
    await page.setInputFiles('#play-document', { name, mimeType: '', buffer });
    await page.click('#play-run');
    await page.waitForSelector(`body[data-runs="${5 + index}"]`);
    assert.equal(await page.textContent('#play-status'), 'ok', await page.textContent('#play-message'));
    assert.equal(await page.textContent('#play-text-view mark'), buyer, name);
    assert.doesNotMatch(await page.textContent('#play-text-view'), /x\(\)/);
    assert.ok(await page.locator('#play-pages').isHidden(), `${name} has no pages to draw`);
  }
  // A photo: the model reads it as an image; its values are derived (no text holds them).
  const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
  await mock.reply(answer({ buyer: 'Mary Jackson' }));
  await page.setInputFiles('#play-document', { name: 'receipt.png', mimeType: 'image/png', buffer: png });
  await page.click('#play-run');
  await page.waitForSelector('body[data-runs="7"]');
  assert.equal(await page.textContent('#play-status'), 'ok', await page.textContent('#play-message'));
  assert.match(await page.textContent('#play-derived'), /derived: \/buyer/);
  const sent = JSON.parse((await mock.requests()).at(-1).body);
  assert.match(sent.messages[1].content[1].image_url.url, /^data:image\/png;base64,iVBORw0KGgo/);

  // A spreadsheet: its sheet as a grid, the value's cell lit with it and named as Excel names it.
  const xlsx = await mock.xlsx([
    ['Buyer', 'Katherine Johnson'],
    ['Total', '12.50'],
  ]);
  await mock.reply(answer({ buyer: 'Katherine Johnson' }));
  await page.setInputFiles('#play-document', { name: 'order.xlsx', mimeType: '', buffer: Buffer.from(xlsx) });
  await page.click('#play-run');
  await page.waitForSelector('body[data-runs="8"]');
  assert.equal(await page.textContent('#play-status'), 'ok', await page.textContent('#play-message'));
  assert.ok(await page.locator('#play-sheet').isVisible(), 'the sheet is shown as a grid');
  assert.equal(await page.textContent('#play-sheet caption'), 'Sheet1');
  const lit = page.locator('#play-sheet td.m-exact');
  assert.equal(await lit.textContent(), 'Katherine Johnson');
  assert.match(await lit.getAttribute('title'), /\/buyer \(Sheet1!B1\)/);
  assert.equal(await page.textContent('#play-sheet tbody tr:first-child th'), '1');
  await page.hover('#play-data .leaf[data-pointer="/buyer"]');
  assert.equal(await page.locator('#play-sheet td.active').textContent(), 'Katherine Johnson');
  await shot('playground-spreadsheet');
  await page.setInputFiles('#play-document', []);
});

/** Each box of the page view: the values it names, its page, where it stands on its sheet (pixels), its ink. */
const boxesShown = () =>
  page.$$eval('#play-pages .box', (boxes) =>
    boxes.map((box) => {
      const sheet = box.parentElement;
      const [outer, inner] = [sheet.getBoundingClientRect(), box.getBoundingClientRect()];
      const canvas = sheet.querySelector('canvas');
      /** The share of dark pixels the canvas has under a rectangle of the sheet (CSS pixels), or null. */
      const ink = (left, top, width, height) => {
        if (canvas.dataset.drawn !== 'true') return null;
        const scale = canvas.width / sheet.clientWidth;
        const [x, y] = [Math.round(left * scale), Math.round(top * scale)];
        const [w, h] = [Math.max(1, Math.round(width * scale)), Math.max(1, Math.round(height * scale))];
        const pixels = canvas.getContext('2d').getImageData(x, y, w, h).data;
        let dark = 0;
        for (let i = 0; i < pixels.length; i += 4) if (pixels[i] + pixels[i + 1] + pixels[i + 2] < 3 * 128) dark++;
        return dark / (w * h);
      };
      const [left, top] = [inner.left - outer.left, inner.top - outer.top];
      return {
        pointers: JSON.parse(box.dataset.pointers),
        page: Number(sheet.dataset.page),
        active: box.classList.contains('active'),
        at: { left, top, width: inner.width, height: inner.height, sheetWidth: outer.width },
        ink: ink(left, top, inner.width, inner.height),
        // The same rectangle lower down, below the page's text, where the page is blank.
        inkBelow: ink(left, outer.height * 0.8, inner.width, inner.height),
      };
    }),
  );

/** Ten pages of an agreement: the values on the first, the seventh and the last, one over a line break. */
function agreement() {
  const clause = (n) => [
    `${n}. Obligations`,
    `${n}.1 Each Party shall perform its obligations under this Agreement with reasonable`,
    'skill and care, in accordance with good industry practice and all applicable laws.',
    `${n}.2 Neither Party shall be liable for any delay caused by events beyond its control.`,
  ];
  const pages = Array.from({ length: 10 }, (_, i) => clause(i + 1).join('\n'));
  pages[0] = [
    'MASTER SERVICES AGREEMENT',
    '',
    'This Agreement is made on 4 March 2024 between Northwind Traders Ltd., a company',
    'registered in England, and Contoso Ltd. (the "Customer"), together the "Parties".',
    '',
    ...clause(1),
  ].join('\n');
  pages[6] = [
    '7. Fees',
    '7.1 The Customer shall pay a fee of EUR 12,500.00 per month, invoiced monthly in',
    'arrears and payable within thirty days of the date of each invoice.',
  ].join('\n');
  pages[9] = ['10. Signatures', '', 'Signed for Contoso Ltd. by its director, Grace', 'Hopper, on 4 March 2024.'].join(
    '\n',
  );
  return pages;
}

test("a PDF's result shows its pages beside the data, each value boxed where it stands on them", async (t) => {
  const values = {
    supplier: 'Northwind Traders Ltd.',
    customer: 'Contoso Ltd.',
    date: '4 March 2024',
    fee: 'EUR 12,500.00',
    signatory: 'Grace Hopper',
  };
  const properties = Object.fromEntries(Object.keys(values).map((key) => [key, { type: 'string' }]));
  await mock.reply(answer(values));
  // A fresh page, so that pdf.js is loaded for this result, as on a person's first PDF.
  await page.reload();
  await page.waitForSelector('body[data-signed-in="true"]');
  await page.click('.tab[data-view="playground"]');
  await page.selectOption('#play-schema', '');
  await page.fill('#play-inline', JSON.stringify({ type: 'object', properties, required: Object.keys(values) }));
  await page.fill('#play-text', '');
  const pdf = Buffer.from(await mock.pdf(agreement()));
  await page.setInputFiles('#play-document', { name: 'agreement.pdf', mimeType: 'application/pdf', buffer: pdf });
  const loaded = () => page.evaluate(() => performance.getEntriesByType('resource').map((entry) => entry.name));
  assert.ok(!(await loaded()).some((url) => /pages\.js|pdf\./.test(url)), 'the first load has no page renderer');
  const [response] = await Promise.all([page.waitForResponse('**/v1/structure'), page.click('#play-run')]);
  const result = await response.json();
  await page.waitForSelector('body[data-runs="1"]');
  const shown = Date.now();
  assert.equal(await page.textContent('#play-status'), 'ok', await page.textContent('#play-message'));
  await page.waitForSelector('body[data-pages="1"]');
  await page.waitForSelector('#play-pages .sheet[data-page="1"] canvas[data-drawn="true"]');
  t.diagnostic(`the first page drawn with its boxes ${Date.now() - shown} ms after the result was shown`);
  assert.equal((await loaded()).filter((url) => /\/console\/(pages\.js|pdf\.min\.mjs)$/.test(url)).length, 2);
  assert.equal(await page.locator('#play-pages .sheet').count(), 10);
  assert.equal(await page.isVisible('#play-text-view'), false, 'the text read is folded away');

  // Every box of every source is drawn on its page, where the result puts it, in scale.
  const boxes = await boxesShown();
  const expected = result.sources.flatMap((source) => source.boxes.map((box) => ({ pointer: source.pointer, ...box })));
  assert.deepEqual(
    expected.map((box) => `${box.pointer} ${box.page}`),
    ['/supplier 1', '/customer 1', '/date 1', '/fee 7', '/signatory 10', '/signatory 10'],
    'a box per line of each value, on its page',
  );
  assert.equal(boxes.length, expected.length);
  for (const want of expected) {
    const scale = boxes[0].at.sheetWidth / result.trace.pageSizes[want.page - 1].width;
    const near = (actual, wanted) => Math.abs(actual - wanted * scale) <= 1;
    const found = boxes.filter(
      ({ pointers, page: at, at: { left, top, width, height } }) =>
        pointers.includes(want.pointer) &&
        at === want.page &&
        near(left, want.x0) &&
        near(top, want.top) &&
        near(width, want.x1 - want.x0) &&
        near(height, want.bottom - want.top),
    );
    assert.equal(found.length, 1, `${JSON.stringify(want)} among ${JSON.stringify(boxes.map((box) => box.at))}`);
  }
  for (const box of boxes.filter((each) => each.page === 1)) {
    assert.ok(box.ink > 0.05, `the page is drawn under ${box.pointers}: ${box.ink} of its box is ink`);
    assert.equal(box.inkBelow, 0, 'and blank where the page is');
  }

  // A value clicked: its box lit, and kept lit when the pointer moves on.
  await page.click('#play-data .leaf[data-pointer="/customer"]');
  await page.mouse.move(5, 5);
  assert.deepEqual(
    (await boxesShown()).filter((box) => box.active).map((box) => box.pointers),
    [['/customer']],
  );
  mkdirSync(results, { recursive: true });
  await page.$eval('#play-document', (input) => input.closest('label').scrollIntoView());
  await page.screenshot({ path: join(results, 'console-pdf.png') });

  // Another, pages away: its page scrolled to and drawn, its box lit and in view, the words under it.
  await page.click('#play-data .leaf[data-pointer="/fee"]');
  await page.waitForSelector('#play-pages .sheet[data-page="7"] canvas[data-drawn="true"]');
  const fee = (await boxesShown()).find((box) => box.pointers.includes('/fee'));
  assert.ok(fee.active, 'the value lights its box');
  assert.ok(fee.ink > 0.05, `${fee.ink} of the box is ink`);
  const inView = await page.$eval('#play-pages .box.active', (box) => {
    const [view, rect] = [box.closest('.pages').getBoundingClientRect(), box.getBoundingClientRect()];
    return rect.top >= view.top && rect.bottom <= view.bottom;
  });
  assert.ok(inView, 'the lit box is scrolled into the page view');
  assert.equal(await page.locator('#play-pages .box.active').count(), 1, 'the value clicked before is out');

  // A box clicked: its value lit in the data, and the value's other line with it.
  await page.click('#play-pages .sheet[data-page="10"] .box >> nth=1');
  assert.deepEqual(
    await page.$$eval('#play-data .leaf.active', (leaves) => leaves.map((leaf) => leaf.dataset.pointer)),
    ['/signatory'],
  );
  assert.deepEqual(
    (await boxesShown()).filter((box) => box.active).map((box) => box.pointers),
    [['/signatory'], ['/signatory']],
  );
  assert.match(await page.textContent('#play-text-view'), /Northwind Traders[\s\S]*Grace\s+Hopper/);
  await page.setInputFiles('#play-document', []);
  assert.deepEqual(page.errors, []);
});

test('insights count the calls per schema, with charts and a CSV export', async () => {
  await page.click('.tab[data-view="insights"]');
  await page.waitForSelector('#insight-table tbody tr');
  const cells = await page.locator('#insight-table tbody tr', { hasText: 'contact' }).locator('td').allTextContents();
  // Three LLM calls (two for the first run), 100 prompt and 20 completion tokens each.
  assert.deepEqual([...cells.slice(0, 7), cells[9]], ['contact', '2', '2', '0', '0', '0', '1.50', '360']);
  assert.match(cells[7], /^\d+$/);
  assert.match(cells[8], /^\d+$/);
  await page.click('#insight-table button:text-is("contact")');
  assert.equal(await page.getAttribute('#chart-status rect[data-label="ok"]', 'data-count'), '2');
  assert.equal(await page.getAttribute('#chart-iterations rect[data-label="2"]', 'data-count'), '1');
  assert.equal(await page.getAttribute('#chart-iterations rect[data-label="1"]', 'data-count'), '1');
  assert.match(await page.textContent('#top-pointers'), /\/email: 1/);
  await shot('insights');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
  const csv = readFileSync(await download.path(), 'utf8');
  assert.match(csv, /^schema,calls,ok,/);
  assert.match(csv, /\r\ncontact,2,2,0,0,0,1\.50,/);
  assert.deepEqual(page.errors, []);
});

test('a user signs in, uses the registry, insights and playground by keyboard alone, and cannot edit', async () => {
  const keyboard = await context.newPage();
  await keyboard.goto(`${base}/console`);
  await keyboard.waitForSelector('body[data-ready="true"]');
  const focused = () =>
    keyboard.evaluate(() => {
      const active = document.activeElement;
      return `${active.tagName.toLowerCase()}#${active.id}|${active.textContent.trim().slice(0, 40)}`;
    });
  /** Presses `key` until the focused element matches `wanted` (at most 60 times). */
  const tabTo = async (wanted, key = 'Tab') => {
    for (let i = 0; i < 60; i++) {
      if (wanted.test(await focused())) return;
      await keyboard.keyboard.press(key);
    }
    assert.fail(`never reached ${wanted}; at ${await focused()}`);
  };
  await tabTo(/^input#token/);
  await keyboard.keyboard.type('console-user');
  await keyboard.keyboard.press('Enter');
  await keyboard.waitForSelector('body[data-signed-in="true"]');
  assert.equal(await keyboard.locator('#new-schema').isVisible(), false, 'a user cannot create');
  await tabTo(/^input#search/);
  await keyboard.keyboard.type('pers');
  await tabTo(/^button#\|person$/);
  await keyboard.keyboard.press('Enter');
  await keyboard.waitForSelector('#schema-view:not([hidden])');
  assert.equal(await keyboard.textContent('#view-name'), 'person');
  assert.equal(await keyboard.locator('#edit-schema').isVisible(), false, 'a user cannot edit');
  await tabTo(/^button#\|Insights$/, 'Shift+Tab');
  await keyboard.keyboard.press('Enter');
  await keyboard.waitForSelector('#insight-table tbody tr');
  await tabTo(/^button#\|contact$/);
  await keyboard.keyboard.press('Enter');
  await keyboard.waitForSelector('#insight-detail:not([hidden])');
  assert.match(await keyboard.textContent('#insight-name'), /contact · 2 calls/);

  // The playground: pick the schema, type the text, run, all from the keyboard.
  await mock.reply(answer({ name: 'Mary Jackson', email: 'mary@langley.example' }));
  await tabTo(/^button#\|Playground$/, 'Shift+Tab');
  await keyboard.keyboard.press('Enter');
  await tabTo(/^select#play-schema/);
  await keyboard.keyboard.press('Home'); // the first schema: contact
  await tabTo(/^textarea#play-text/);
  await keyboard.keyboard.type('Mary Jackson, mary@langley.example');
  await tabTo(/^button#play-run/);
  await keyboard.keyboard.press('Enter');
  await keyboard.waitForSelector('body[data-runs="1"]');
  assert.equal(await keyboard.textContent('#play-status'), 'ok', await keyboard.textContent('#play-message'));
  assert.equal(await keyboard.textContent('#play-text-view mark'), 'Mary Jackson');
  await keyboard.close();
});

test('a reviewer checks the values in doubt by keyboard: an edit breaking a rule is refused, then saved', async () => {
  const schema = {
    type: 'object',
    properties: { vendor: { type: 'string' }, total: { type: 'number' }, tax: { type: 'number' } },
    required: ['vendor', 'total', 'tax'],
    'x-kubernetes-validations': [{ rule: 'self.tax <= self.total', message: 'tax must not exceed total' }],
  };
  // The total and the tax are written in words: no span of the text is the value (derived).
  const prompt = 'Invoice from Acme Tools: one hundred and twenty-five in all, of which tax twenty point one.';
  await mock.reply(answer({ vendor: 'Acme Tools', total: 125, tax: 20.1 }));
  const called = await fetch(`${base}/v1/structure`, {
    method: 'POST',
    headers: { authorization: 'Bearer console-user', 'content-type': 'application/json' },
    body: JSON.stringify({ prompt, schema }),
  }).then((response) => response.json());
  assert.equal(called.status, 'ok');
  const id = called.review.id;
  assert.deepEqual(
    called.review.fields.map((field) => field.pointer),
    ['/total', '/tax'],
  );

  const reviewer = await context.newPage();
  await signIn(reviewer, 'console-reviewer');
  assert.equal(await reviewer.locator('.tab[data-view="review"]').isVisible(), true);
  await reviewer.click('.tab[data-view="review"]');
  const open = reviewer.locator('#review-items tbody button', { hasText: id.slice(0, 8) });
  await open.waitFor();
  await open.click();
  await reviewer.waitForSelector('body[data-review-paint]');
  const paint = Number(await reviewer.getAttribute('body', 'data-review-paint'));
  assert.ok(paint <= 300, `the item was drawn ${paint} ms after it was opened`);
  const pointers = await reviewer.$$eval('#review-values li', (rows) => rows.map((row) => row.dataset.pointer));
  assert.deepEqual(pointers, ['/total', '/tax', '/vendor'], 'the values in doubt first');
  assert.equal(await reviewer.textContent('#review-text mark.m-exact'), 'Acme Tools');

  // a: the total is right. e: the tax was 200 — which the rule refuses.
  await reviewer.keyboard.press('a');
  await reviewer.keyboard.press('e');
  await reviewer.keyboard.type('200');
  await reviewer.keyboard.press('Enter');
  await reviewer.keyboard.press('s');
  await reviewer.waitForSelector('#review-problems li');
  assert.match(await reviewer.textContent('#review-problems'), /tax must not exceed total/);
  await reviewer.screenshot({ path: join(results, 'console-review-refused.png'), fullPage: true });
  let stored = await asAdmin(`/v1/review/${id}`).then((response) => response.json());
  assert.equal(stored.status, 'claimed', 'nothing saved');

  // The tax was 20.
  await reviewer.fill('li[data-pointer="/tax"] input', '20');
  await reviewer.press('li[data-pointer="/tax"] input', 'Enter');
  await reviewer.keyboard.press('s');
  await reviewer.waitForSelector(`body[data-reviewed="${id}"]`);
  assert.match(await reviewer.textContent('#review-message'), /Reviewed by Dorothy Vaughan/);
  await reviewer.screenshot({ path: join(results, 'console-review.png'), fullPage: true });
  stored = await asAdmin(`/v1/review/${id}`).then((response) => response.json());
  assert.deepEqual(stored.reviewedResult.data, { vendor: 'Acme Tools', total: 125, tax: 20 });
  assert.deepEqual(stored.reviewed.corrected, ['/tax']);
  // The queue's page counts what reviewers corrected.
  await reviewer.click('#review-back');
  const corrected = reviewer.locator('#review-corrections tbody tr', { hasText: '/tax' });
  await corrected.waitFor();
  assert.match(await corrected.textContent(), /inline\/tax1 of 1 reviewed20\.1 → 20$/);
  await reviewer.screenshot({ path: join(results, 'console-review-queue.png'), fullPage: true });
  await reviewer.close();
});

/** A chat completion whose answer is written by `tokens`, each `[text, probability]`: log-probabilities given. */
function unsure(tokens) {
  const reply = completion(tokens.map(([text]) => text).join(''));
  const body = JSON.parse(reply.body);
  body.choices[0].logprobs = {
    content: tokens.map(([token, p]) => ({ token, logprob: Math.log(p), bytes: null, top_logprobs: [] })),
  };
  return { ...reply, body: JSON.stringify(body) };
}

test("a PDF's values in doubt: one accepted, one corrected after a refused edit, sent on and counted", async () => {
  const pdf = await mock.pdf(['Invoice from Acme Tools', 'Total: 120.50', 'Tax: 20.10']);
  await mock.reply(
    unsure([
      ['{"answer": {"vendor": ', 0.99],
      ['"Acme Tools"', 0.99],
      [', "total": ', 0.99],
      ['120.5', 0.75],
      [', "tax": ', 0.99],
      ['21.1', 0.72],
      ['}}', 0.99],
    ]),
  );
  // No span writes 21.1: asked whether the page states it, the model says it does.
  await mock.reply(answer({ value_1: 'stated' }));
  const schema = {
    type: 'object',
    properties: { vendor: { type: 'string' }, total: { type: 'number' }, tax: { type: 'number', minimum: 0 } },
    required: ['vendor', 'total', 'tax'],
    additionalProperties: false,
  };
  const document = { mediaType: 'application/pdf', data: Buffer.from(pdf).toString('base64') };
  const called = await fetch(`${base}/v1/structure`, {
    method: 'POST',
    headers: { authorization: 'Bearer console-user', 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: '', document, schema }),
  }).then((response) => response.json());
  assert.equal(called.status, 'ok', JSON.stringify(called));
  assert.deepEqual(
    called.review.fields.map((field) => [field.pointer, field.reason]),
    [
      ['/total', 'confidence 0.75, under 0.8'],
      [
        '/tax',
        'derived: no span of the text supports it; confidence 0.72, under 0.8; ' +
          'in doubt: the model was unsure, a second look kept it',
      ],
    ],
  );
  const id = called.review.id;

  const reviewer = await context.newPage();
  const faults = [];
  reviewer.on('pageerror', (error) => faults.push(error.message));
  await signIn(reviewer, 'console-reviewer');
  await reviewer.click('.tab[data-view="review"]');
  const open = reviewer.locator('#review-items tbody button', { hasText: id.slice(0, 8) });
  await open.waitFor();
  await open.click();
  await reviewer.waitForSelector('#review-item:not([hidden])');
  await reviewer.waitForFunction(
    (id) => document.body.dataset.reviewPages === id || document.querySelector('#review-pages .error'),
    id,
  );
  assert.equal(await reviewer.locator('#review-pages .error').count(), 0, await reviewer.textContent('#review-pages'));
  await reviewer.waitForSelector('#review-pages .box');
  // A box for each value the page writes (the vendor, the total); the misread tax has none.
  assert.equal(await reviewer.locator('#review-pages .box').count(), 2, 'a box for each value on the page');
  assert.equal(await reviewer.locator('#review-pages .box.m-doubt').count(), 1, 'the total in doubt marked so');
  await reviewer.screenshot({ path: join(results, 'console-review-pdf.png'), fullPage: true });

  // a: the total is right. e: the tax, typed as a negative — which the schema refuses.
  await reviewer.keyboard.press('a');
  await reviewer.keyboard.press('e');
  await reviewer.keyboard.type('-20.1');
  await reviewer.keyboard.press('Enter');
  await reviewer.keyboard.press('s');
  await reviewer.waitForSelector('#review-problems li');
  const refused = await reviewer.textContent('#review-problems');
  assert.equal(refused, '/tax: value must be ≥ 0 (was -20.1)', "the schema's reason, at its pointer");
  await reviewer.screenshot({ path: join(results, 'console-review-pdf-refused.png'), fullPage: true });
  let stored = await asAdmin(`/v1/review/${id}`).then((response) => response.json());
  assert.equal(stored.status, 'claimed', 'nothing saved');

  // The page says 20.10: the model misread it.
  await reviewer.fill('li[data-pointer="/tax"] input', '20.1');
  await reviewer.press('li[data-pointer="/tax"] input', 'Enter');
  await reviewer.keyboard.press('s');
  await reviewer.waitForSelector(`body[data-reviewed="${id}"]`);
  const reviewed = { vendor: 'Acme Tools', total: 120.5, tax: 20.1 };

  // Out by the API: valid against the schema, who and when.
  stored = await asAdmin(`/v1/review/${id}`).then((response) => response.json());
  assert.deepEqual(stored.reviewedResult.data, reviewed);
  assert.equal(stored.reviewedResult.status, 'ok');
  assert.equal(stored.reviewedResult.review.status, 'reviewed');
  assert.deepEqual(stored.reviewed.corrected, ['/tax']);
  assert.equal(stored.reviewed.by, 'Dorothy Vaughan');
  assert.equal(stored.document, undefined, 'the PDF is kept only while the item is open');
  assert.deepEqual(validated(schema, stored.reviewedResult.data), []);

  // And by the webhook, signed with the operator's secret.
  const delivery = await webhook.next(id).catch((error) => {
    throw new Error(`${error.message}; the item says ${JSON.stringify(stored.delivery)}`);
  });
  const signature = createHmac('sha256', WEBHOOK_SECRET).update(delivery.body).digest('hex');
  assert.equal(delivery.headers['x-structure-signature'], `sha256=${signature}`);
  assert.equal(delivery.headers['x-structure-event'], 'review.reviewed');
  const sent = JSON.parse(delivery.body);
  assert.deepEqual([sent.event, sent.tenant, sent.id], ['review.reviewed', 'acme', id]);
  assert.deepEqual(sent.result.data, reviewed);
  assert.deepEqual(validated(schema, sent.result.data), []);
  stored = await asAdmin(`/v1/review/${id}`).then((response) => response.json());
  assert.equal(stored.delivery?.status, 'delivered', JSON.stringify(stored.delivery));

  // Insights count the correction: the schema's /tax corrected once.
  await reviewer.click('.tab[data-view="insights"]');
  const inline = reviewer.locator('#insight-table tbody button', { hasText: 'inline' });
  await inline.waitFor();
  await inline.click();
  await reviewer.waitForSelector('body[data-insight-corrections="inline"]');
  const counted = await reviewer.$$eval('#insight-corrections li', (items) => items.map((item) => item.textContent));
  assert.ok(
    counted.some((line) => /^\/tax: [1-9]\d* of [1-9]\d* reviewed$/.test(line)),
    JSON.stringify(counted),
  );
  await reviewer.screenshot({ path: join(results, 'console-review-insights.png'), fullPage: true });
  assert.deepEqual(faults, []);
  await reviewer.close();
});

/** The ways `value` breaks this test's flat object `schema` (types, required, minimum, no others): none when valid. */
function validated(schema, value) {
  const problems = [];
  for (const name of schema.required) if (!(name in value)) problems.push(`/${name} missing`);
  for (const [name, item] of Object.entries(value)) {
    const property = schema.properties[name];
    if (!property) problems.push(`/${name} not allowed`);
    else if (property.type === 'number' && typeof item !== 'number') problems.push(`/${name} not a number`);
    else if (property.type === 'string' && typeof item !== 'string') problems.push(`/${name} not a string`);
    else if (property.minimum !== undefined && item < property.minimum) problems.push(`/${name} under its minimum`);
  }
  return problems;
}

test('an admin keeps a reviewed result as an example of its registered schema', async () => {
  const schema = {
    type: 'object',
    properties: { vendor: { type: 'string' }, total: { type: 'number' } },
    required: ['vendor', 'total'],
  };
  const put = await asAdmin('/v1/schemas/invoice-review', { method: 'PUT', body: JSON.stringify({ schema }) });
  assert.equal(put.status, 200);
  await mock.reply(answer({ vendor: 'Acme Tools', total: 125 }));
  const called = await fetch(`${base}/v1/structure`, {
    method: 'POST',
    headers: { authorization: 'Bearer console-user', 'content-type': 'application/json' },
    body: JSON.stringify({
      prompt: 'Acme Tools: one hundred and twenty-five.',
      schema: 'invoice-review',
      schemaMode: 'named',
    }),
  }).then((response) => response.json());
  const id = called.review.id;
  const admin = await context.newPage();
  await signIn(admin, 'console-admin');
  await admin.click('.tab[data-view="review"]');
  const open = admin.locator('#review-items tbody button', { hasText: id.slice(0, 8) });
  await open.waitFor();
  await open.click();
  await admin.waitForSelector('#review-item:not([hidden])');
  await admin.keyboard.press('a');
  await admin.keyboard.press('s');
  await admin.waitForSelector(`body[data-reviewed="${id}"]`);
  await admin.click('#review-example');
  await admin.waitForFunction(() => document.getElementById('review-message').textContent.startsWith('Kept'));
  assert.equal(await admin.textContent('#review-message'), 'Kept as an example of invoice-review (version 1.1).');
  const registered = await asAdmin('/v1/schemas/invoice-review').then((response) => response.json());
  assert.deepEqual(registered.schema.examples, [{ vendor: 'Acme Tools', total: 125 }]);
  await admin.close();
});
