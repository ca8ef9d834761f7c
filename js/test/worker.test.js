// Node calls never block the event loop: the component runs in the package's worker threads.
// Against the mock LLM with a one-second reply delay: timers keep firing during a call, ten
// calls at once all resolve right, a worker killed mid-call rejects that call with a typed
// error and the next call gets a fresh worker, and close() lets the process exit.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rm, writeFile } from 'node:fs/promises';
import { after, before, beforeEach, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createStructure, memoryKeyValue, StructureError } from 'structure-tool';
import { answer, startMockLlm } from './mock-llm.js';

const POOL = Symbol.for('structure-tool.pool');
const DELAY_MS = 1000;
const prompt = 'Ada Lovelace of Analytical Engines, ada@example.org';

let mock;
before(async () => {
  mock = await startMockLlm();
});
after(() => mock?.stop());
beforeEach(() => mock.reset());

function config() {
  return { structure_model: 'openai/gpt-4.1-mini', openai_base_url: mock.baseUrl, openai_api_key: 'sk-worker-test' };
}

function contact(name) {
  return { name, email: `${name.toLowerCase()}@example.org` };
}

async function delayedAnswer(value) {
  await mock.reply({ ...answer(value), delayMs: DELAY_MS });
}

test('a call in flight leaves the event loop free: a 10 ms timer keeps firing', async () => {
  const structure = await createStructure({ config: config() });
  await delayedAnswer(contact('Ada'));
  let last = performance.now();
  let largestGap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    largestGap = Math.max(largestGap, now - last);
    last = now;
  }, 10);
  const started = performance.now();
  const outcome = await structure.structure({ prompt, schema: 'contact', schemaMode: 'named' });
  clearInterval(timer);
  assert.equal(outcome.status, 'ok');
  assert.ok(performance.now() - started >= DELAY_MS, 'the call waited for the model');
  assert.ok(largestGap < 100, `the event loop stalled for ${largestGap.toFixed(0)} ms`);
  await structure.close();
});

test('ten calls at once all resolve with their own data, spread over workers', async () => {
  const structure = await createStructure({ config: config(), workers: 3 });
  const names = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'John', 'Frances', 'Tony', 'Leslie'];
  // The mock answers in arrival order, so the i-th request it received got the i-th reply:
  // each call must resolve with the reply to its own request, whichever worker sent it.
  for (const name of names) await mock.reply(answer(contact(name)));
  const prompts = names.map((name) => `${name}, ${name.toLowerCase()}@example.org`);
  const outcomes = await Promise.all(
    prompts.map((text) => structure.structure({ prompt: text, schema: 'contact', schemaMode: 'named' })),
  );
  const requests = await mock.requests();
  assert.equal(requests.length, 10);
  prompts.forEach((text, call) => {
    const arrival = requests.findIndex((request) => request.body.includes(text));
    assert.ok(arrival >= 0, `no request carried "${text}"`);
    assert.equal(outcomes[call].status, 'ok');
    assert.deepEqual(outcomes[call].data, contact(names[arrival]), `call ${call} got another call's reply`);
  });
  assert.ok(structure[POOL].workers.length === 3, 'three workers ran the calls');
  await structure.close();
});

test('a worker killed mid-call rejects that call with a typed error; the next call gets a new one', async () => {
  const store = new Map();
  const structure = await createStructure({ config: config(), keyValue: memoryKeyValue(store) });
  await structure.withScope({ tenant: 'acme' }).setSettings({ maxLoops: 2 });
  await delayedAnswer(contact('Ada'));
  const call = structure.structure({ prompt, schema: 'contact', schemaMode: 'named' });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const [worker] = structure[POOL].workers;
  await worker.terminate();
  const error = await call.catch((e) => e);
  assert.ok(error instanceof StructureError, String(error));
  assert.equal(error.kind, 'worker-exited');

  await mock.reset();
  await mock.reply(answer(contact('Ada')));
  const outcome = await structure.structure({ prompt, schema: 'contact', schemaMode: 'named' });
  assert.equal(outcome.status, 'ok');
  assert.notEqual(structure[POOL].workers[0], worker, 'a fresh worker');
  const settings = await structure.withScope({ tenant: 'acme' }).getSettings();
  assert.equal(settings.overrides.maxLoops, 2, 'the store outlived the worker');
  await structure.close();
});

test('close() lets the process exit', async () => {
  const program = `
    import { createStructure } from 'structure-tool';
    const config = { openai_base_url: ${JSON.stringify(mock.baseUrl)}, openai_api_key: 'sk' };
    const structure = await createStructure({ config });
    const definition = await structure.toolDefinition();
    await structure.close();
    console.log(definition.name);
  `;
  // A module file inside the package, so that it imports the package by its name.
  const file = new URL(`./close-${process.pid}.tmp.mjs`, import.meta.url);
  await writeFile(file, program);
  const child = spawn(process.execPath, [fileURLToPath(file)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  const exited = once(child, 'exit');
  const timeout = new Promise((_, reject) =>
    setTimeout(() => reject(new Error('the process did not exit')), 20000).unref(),
  );
  const [code] = await Promise.race([exited, timeout]).finally(() => rm(file, { force: true }));
  assert.equal(code, 0);
  assert.equal(output.trim(), 'structure');
});
