// The web console (/console) in headless Chromium (Debian's `chromium`, driven by
// playwright-core) against `structure serve` (the real host and component, built by cargo) and
// the mock LLM: sign in; a schema with a mistake shown at its pointer, fixed and saved; a stale
// edit refused; a hostile manual kept as text; the playground's highlights covering exactly
// each source's span; insights counting the calls; the main flows by keyboard alone.
// Leaves screenshots in test-results/console-*.png.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { answer, startMockLlm } from './mock-llm.js';

const CHROMIUM = process.env.STRUCTURE_CHROMIUM ?? '/usr/bin/chromium';
const results = fileURLToPath(new URL('../test-results/', import.meta.url));
const workspace = fileURLToPath(new URL('../..', import.meta.url));
const TOKENS = [
  { token: 'console-admin', tenant: 'acme', role: 'admin' },
  { token: 'console-user', tenant: 'acme', role: 'user' },
];

let mock;
let server;
let base;
let context;
let profile;
let page;

/** `structure serve` on a free port, as the README runs it. */
async function startServer(llmBaseUrl) {
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
  server = await startServer(mock.baseUrl);
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

  // A PDF with an inline schema: the values are marked in the text read from its pages.
  const pdf = await mock.pdf(['Purchase order', 'Buyer: Katherine Johnson, Hampton']);
  await mock.reply(answer({ buyer: 'Katherine Johnson' }));
  await page.selectOption('#play-schema', '');
  await page.fill(
    '#play-inline',
    JSON.stringify({ type: 'object', properties: { buyer: { type: 'string' } }, required: ['buyer'] }),
  );
  await page.fill('#play-text', '');
  await page.setInputFiles('#play-pdf', { name: 'order.pdf', mimeType: 'application/pdf', buffer: Buffer.from(pdf) });
  await page.click('#play-run');
  await page.waitForSelector('body[data-runs="3"]');
  assert.equal(await page.textContent('#play-status'), 'ok', await page.textContent('#play-message'));
  assert.equal(await page.textContent('#play-text-view mark'), 'Katherine Johnson');
  assert.match(await page.textContent('#play-text-view'), /Purchase order[\s\S]*Buyer: Katherine Johnson/);
  assert.match((await mock.requests()).at(-1).body, /Katherine Johnson/, 'the model read the PDF');
  await page.setInputFiles('#play-pdf', []);
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
