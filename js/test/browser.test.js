// The demo page in headless Chromium (Debian's `chromium`, driven by playwright-core) against the
// mock LLM: the component runs in the page with JSPI and calls the mock across origins (CORS).
// Leaves a screenshot in test-results/demo.png.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serveDirectory } from '../scripts/serve-demo.js';
import { answer, startMockLlm } from './mock-llm.js';

const CHROMIUM = process.env.STRUCTURE_CHROMIUM ?? '/usr/bin/chromium';
const results = fileURLToPath(new URL('../test-results/', import.meta.url));

let mock;
let site;
let context;
let profile;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `no browser at ${CHROMIUM}: apt-get install chromium, or set STRUCTURE_CHROMIUM`);
  mock = await startMockLlm();
  site = await serveDirectory(fileURLToPath(new URL('../dist/demo/', import.meta.url)));
  profile = mkdtempSync(join(tmpdir(), 'structure-chromium-'));
  // playwright-core refuses --user-data-dir in args: a fresh profile comes from launchPersistentContext.
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
    ],
  });
});

after(async () => {
  await context?.close();
  site?.close();
  mock?.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test('the demo page structures text in Chromium and shows the result, iterations and reasons fed back', async () => {
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(`http://127.0.0.1:${site.address().port}/`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 60_000 });
  assert.ok(
    (await page.locator('#schema-name option').allTextContents()).some((text) => text.startsWith('contact (bundled)')),
  );

  // The first answer breaks the schema, the second is valid: two iterations, one reason fed back.
  const ada = { name: 'Ada Lovelace', email: 'ada@analytical.example', organization: 'Analytical Engines Ltd' };
  await mock.reply(answer({ ...ada, email: 'ada at analytical' }));
  await mock.reply(answer(ada));
  await page.fill('#endpoint', mock.baseUrl);
  await page.fill('#model', 'openai/gpt-4.1-mini');
  await page.fill('#api-key', 'sk-browser-test');
  await page.selectOption('#schema-mode', 'named');
  await page.selectOption('#schema-name', 'contact');
  await page.click('#run');
  await page.waitForSelector('body[data-runs="1"]', { timeout: 60_000 });

  assert.equal(await page.textContent('#status'), 'ok', await page.textContent('#output'));
  assert.deepEqual(JSON.parse(await page.textContent('#output')), ada);
  assert.equal(await page.textContent('#iterations'), '2');
  assert.equal(await page.textContent('#llm-calls'), '2');
  assert.equal(await page.textContent('#origin'), 'registry:bundled');
  const reasons = await page.locator('#feedback li').allTextContents();
  assert.equal(reasons.length, 1);
  assert.match(reasons[0], /\/email/);
  const requests = await mock.requests();
  assert.equal(requests.length, 2);
  assert.equal(requests[0].headers.find(([name]) => name === 'authorization')?.[1], 'Bearer sk-browser-test');
  assert.deepEqual(pageErrors, []);

  mkdirSync(results, { recursive: true });
  await page.screenshot({ path: join(results, 'demo.png'), fullPage: true });
});

test('the demo page shows a typed error', async () => {
  const page = context.pages()[0];
  await page.selectOption('#schema-mode', 'json');
  await page.fill('#schema-json', '{"type": "object", "properties": ');
  await page.click('#run');
  await page.waitForSelector('body[data-runs="2"]');
  assert.equal(await page.textContent('#status'), 'error: invalid-request');
  assert.match(await page.textContent('#output'), /not valid JSON/);

  await page.fill('#schema-json', '{"$ref": "#"}');
  await page.click('#run');
  await page.waitForSelector('body[data-runs="3"]');
  assert.equal(await page.textContent('#status'), 'error: invalid-schema', await page.textContent('#output'));
  assert.match(await page.textContent('#output'), /reference back to itself/);
  assert.equal((await mock.requests()).length, 2, 'no LLM call for a refused request');
});

test('the demo page lists every record and the incomplete ones in records mode', async () => {
  const page = context.pages()[0];
  const schema = {
    type: 'object',
    properties: { name: { type: 'string' }, email: { type: 'string' } },
    required: ['name', 'email'],
  };
  await page.fill('#prompt', 'Ada Lovelace, ada@analytical.example. Grace Hopper, no email given.');
  await page.fill('#schema-json', JSON.stringify(schema));
  await page.check('#records');
  await mock.reply(
    answer({ records: [{ name: 'Ada Lovelace', email: 'ada@analytical.example' }, { name: 'Grace Hopper' }] }),
  );
  await page.click('#run');
  await page.waitForSelector('body[data-runs="4"]');
  assert.equal(await page.textContent('#status'), 'ok', await page.textContent('#output'));
  const output = await page.textContent('#output');
  assert.match(output, /^1 record\(s\):/);
  assert.match(output, /ada@analytical\.example/);
  assert.match(output, /Incomplete, not invented:\n\{"name":"Grace Hopper"\}: the text gives no value for \/email/);
  const sent = (await mock.requests()).at(-1).json;
  assert.match(sent.messages[0].content, /every record/);
});

test('the demo page reads a PDF picked from a file and shows the page each value was read on', async () => {
  const page = context.pages()[0];
  await page.uncheck('#records');
  const schema = { type: 'object', properties: { signer: { type: 'string' } }, required: ['signer'] };
  await page.fill('#prompt', '');
  await page.fill('#schema-json', JSON.stringify(schema));
  const pdf = await mock.pdf(['Mutual non-disclosure agreement.', 'Signed for the Discloser by Zoë Kim.']);
  await page.setInputFiles('#document', {
    name: 'contract.pdf',
    mimeType: 'application/pdf',
    buffer: Buffer.from(pdf),
  });
  await mock.reply(answer({ signer: 'Zoë Kim' }));
  await page.click('#run');
  await page.waitForSelector('body[data-runs="5"]');
  assert.equal(await page.textContent('#status'), 'ok', await page.textContent('#output'));
  assert.match(await page.textContent('#output'), /\/signer: “Zoë Kim” \(page 2\)/);
  const sent = (await mock.requests()).at(-1).json;
  assert.match(sent.messages.at(-1).content, /Signed for the Discloser by Zoë Kim/);
  mkdirSync(results, { recursive: true });
  await page.screenshot({ path: join(results, 'demo-pdf.png'), fullPage: true });
});
