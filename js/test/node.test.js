// The package in Node against the mock LLM: each status, typed errors, the key-value store (the
// schema builder's cache, the registry) and the config passed in by the embedder.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, beforeEach, test } from 'node:test';
import { createStructure, memoryKeyValue, StructureError } from 'structure-tool';
import { instantiate } from '../dist/node/structure.js';
import { createStructureWith, keyValueImports } from '../src/structure.js';
import { answer, completion, need, providerError, startMockLlm } from './mock-llm.js';

let mock;
let structure;
let store;

before(async () => {
  mock = await startMockLlm();
});
after(() => mock?.stop());
beforeEach(async () => {
  await mock.reset();
  store = new Map();
  structure = await createStructure({
    config: {
      structure_model: 'openai/gpt-4.1-mini',
      openai_base_url: mock.baseUrl,
      openai_api_key: 'sk-node-test',
      // The operator's floor lowered, so that a short text is read in several chunks.
      structure_min_chunk_tokens: '50',
    },
    keyValue: memoryKeyValue(store),
  });
});

const ada = { name: 'Ada Lovelace', email: 'ada@example.org', organization: 'Analytical Engines' };
const prompt = 'Ada Lovelace of Analytical Engines, ada@example.org';

test('ok: a valid first answer is the data, after one LLM call made with the config given', async () => {
  await mock.reply(answer(ada));
  const outcome = await structure.structure({ prompt, schema: 'contact', schemaMode: 'named' });
  assert.equal(outcome.status, 'ok');
  assert.deepEqual(outcome.data, ada);
  assert.equal(outcome.schemaOrigin, 'registry:bundled');
  assert.equal(outcome.iterations, 1);
  assert.equal(outcome.usage.llmCalls, 1);
  const [sent] = await mock.requests();
  assert.equal(sent.path, '/v1/chat/completions');
  assert.equal(sent.json.model, 'gpt-4.1-mini');
  assert.equal(sent.headers.find(([name]) => name === 'authorization')?.[1], 'Bearer sk-node-test');
});

test('sources: each value of the data with its span of the prompt, in JavaScript string indices', async () => {
  const text = '🎉 Zoë Kim from Zürich, zoe@example.org';
  const zoe = { name: 'Zoë Kim', email: 'zoe@example.org', organization: 'Fabrikam' };
  await mock.reply(answer(zoe));
  const outcome = await structure.structure({ prompt: text, schema: 'contact', schemaMode: 'named' });
  assert.equal(outcome.status, 'ok');
  const byPointer = Object.fromEntries(outcome.sources.map((source) => [source.pointer, source]));
  for (const pointer of ['/name', '/email']) {
    const source = byPointer[pointer];
    assert.equal(source.match, 'exact');
    assert.equal(text.slice(source.utf16Start, source.utf16End), source.text);
    assert.equal([...text].slice(source.start, source.end).join(''), source.text);
  }
  assert.deepEqual(byPointer['/organization'], { pointer: '/organization', match: 'derived' });
});

test('records: every record of the text with its sources; one lacking a required value is incomplete', async () => {
  const text = 'Zoë ordered 2 lamps. Ada ordered a desk, no count given.';
  const order = {
    type: 'object',
    properties: { customer: { type: 'string' }, item: { type: 'string' }, quantity: { type: 'integer' } },
    required: ['customer', 'item', 'quantity'],
  };
  await mock.reply(
    answer({
      records: [
        { customer: 'Zoë', item: 'lamps', quantity: 2 },
        { customer: 'Ada', item: 'desk' },
      ],
    }),
  );
  const outcome = await structure.structure({ prompt: text, schema: order, records: true });
  assert.equal(outcome.status, 'ok');
  assert.deepEqual(outcome.data, [{ customer: 'Zoë', item: 'lamps', quantity: 2 }]);
  assert.equal(outcome.incomplete.length, 1);
  assert.deepEqual(outcome.incomplete[0].record, { customer: 'Ada', item: 'desk' });
  assert.match(outcome.incomplete[0].need, /\/quantity/);
  const item = outcome.sources.find((source) => source.pointer === '/0/item');
  assert.equal(text.slice(item.utf16Start, item.utf16End), 'lamps');
  assert.equal(outcome.trace.chunks, 1);
  const [sent] = await mock.requests();
  assert.match(sent.json.messages[0].content, /every record/);
});

test('records: a long text is read in chunks, calls in flight together under jco and a retry beside them', async () => {
  const text = Array.from(
    { length: 8 },
    (_, i) => `Paragraph ${i}: nothing was ordered on this day, and the shop stayed quiet.`,
  ).join('\n\n');
  // The first call is told to wait: its retry waits on a timer beside the calls in flight.
  const limited = providerError(429, 'rate_limit_exceeded', 'slow down');
  await mock.reply({ ...limited, headers: [...limited.headers, ['retry-after-ms', '300']] });
  for (let i = 0; i < 16; i += 1) await mock.reply({ ...answer({ records: [] }), delayMs: 50 });
  const outcome = await structure.structure({
    prompt: text,
    schema: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] },
    records: true,
    settings: { chunkTokens: 60 },
  });
  assert.equal(outcome.status, 'ok');
  assert.deepEqual(outcome.data, []);
  assert.ok(outcome.trace.chunks > 2, `${outcome.trace.chunks} chunks`);
  assert.equal(outcome.trace.retries, 1);
  assert.equal(outcome.usage.llmCalls, outcome.trace.chunks + 1);
  assert.equal((await mock.requests()).length, outcome.trace.chunks + 1);
});

test('a long document is read in parts under jco and merged into one, the window learned from a refusal', async () => {
  await mock.serveAs({ kind: 'openai', contextLimit: 2048 });
  await mock.readDocuments();
  const { text, schema } = await mock.document(20000);
  // A model no table knows, at a server that says nothing of its window: 8,192 tokens assumed,
  // then what its refusal says.
  const outcome = await structure.structure({ prompt: text, schema, settings: { model: 'openai/contract-reader' } });
  assert.equal(outcome.status, 'ok');
  assert.equal(outcome.data.governing_law, 'Delaware');
  assert.deepEqual(outcome.data.parties, ['Acme Widgets Inc.', 'Zoë Kim', 'Łukasz Nowak LLC']);
  assert.deepEqual(outcome.trace.contextWindow, { tokens: 2048, from: 'learned' });
  assert.ok(outcome.trace.chunks > 2, `${outcome.trace.chunks} chunks`);
  const last = outcome.sources.find((source) => source.pointer === '/parties/2');
  assert.equal(text.slice(last.utf16Start, last.utf16End), 'Łukasz Nowak LLC');
  assert.equal(outcome.trace.chunkOf['/parties/2'], outcome.trace.chunks - 1);
});

test('a Word document and a web page: read into text inside the component, told by name or bytes', async () => {
  const schema = { type: 'object', properties: { total: { type: 'string' } }, required: ['total'] };
  const docx = await mock.docx(['Invoice INV-7', 'Total: 12.50 EUR']);
  const html = new TextEncoder().encode('<p>Invoice INV-7</p><script>no()</script><p>Total:&#32;12.50 EUR</p>');
  const documents = [
    docx,
    new Blob([docx]),
    new File([html], 'invoice.html'),
    new File([html], 'invoice', { type: 'text/html' }),
  ];
  for (const document of documents) {
    await mock.reset();
    await mock.reply(answer({ total: '12.50 EUR' }));
    const outcome = await structure.structure({ document, schema, returnText: true });
    assert.equal(outcome.status, 'ok');
    assert.equal(outcome.text, 'Invoice INV-7\nTotal: 12.50 EUR');
    assert.ok(!outcome.text.includes('no()'));
    const [source] = outcome.sources;
    assert.equal(outcome.text.slice(source.utf16Start, source.utf16End), '12.50 EUR');
  }
  // A photo: given to the model as an image part (the model reads images); its values derived.
  await mock.reset();
  await mock.reply(answer({ total: '12.50 EUR' }));
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]);
  const outcome = await structure.structure({ document: new File([png], 'receipt.png'), schema });
  assert.equal(outcome.status, 'ok');
  assert.equal(outcome.sources[0].match, 'derived');
  const [sent] = await mock.requests();
  assert.match(sent.json.messages[1].content[1].image_url.url, /^data:image\/png;base64,iVBORw0K/);
  // A zip that is not a Word document: a typed error naming why.
  await assert.rejects(
    structure.structure({ document: docx.slice(0, 40), schema }),
    (error) => error instanceof StructureError && error.kind === 'invalid-document' && error.detail === 'unreadable',
  );
});

test('a PDF given as bytes or as a Blob: its text read inside the component, each value with its page', async () => {
  const pdf = await mock.pdf(['Agreement between the parties.', 'Signed by Zoë Kim.']);
  const schema = { type: 'object', properties: { signer: { type: 'string' } }, required: ['signer'] };
  for (const document of [pdf, new Blob([pdf], { type: 'application/pdf' })]) {
    await mock.reset();
    await mock.reply(answer({ signer: 'Zoë Kim' }));
    const outcome = await structure.structure({ document, schema, returnText: true });
    assert.equal(outcome.status, 'ok');
    const [source] = outcome.sources;
    assert.equal(source.page, 2);
    assert.equal(outcome.text.slice(source.utf16Start, source.utf16End), 'Zoë Kim');
    const [sent] = await mock.requests();
    assert.match(sent.json.messages.at(-1).content, /Signed by Zoë Kim/);
  }
  // A scan, or anything else that is not a PDF with text: a typed error naming why.
  await assert.rejects(
    structure.structure({ document: new TextEncoder().encode('%PDF-1.7 broken'), schema }),
    (error) => error instanceof StructureError && error.kind === 'invalid-document' && error.detail === 'unreadable',
  );
  // The header a few bytes in is still a PDF, as the core tells one (read as a PDF, not as text).
  await assert.rejects(
    structure.structure({ document: new TextEncoder().encode('From: a\r\n%PDF-1.7 broken'), schema }),
    (error) => error instanceof StructureError && error.kind === 'invalid-document' && error.detail === 'unreadable',
  );
});

test('ok after a violation: the reason fed back names the field', async () => {
  await mock.reply(answer({ ...ada, email: 'not an email' }));
  await mock.reply(answer(ada));
  const outcome = await structure.structure({ prompt, schema: 'contact', schemaMode: 'named' });
  assert.equal(outcome.status, 'ok');
  assert.equal(outcome.iterations, 2);
  assert.equal(outcome.trace.feedback.length, 1);
  assert.match(outcome.trace.feedback[0], /\/email/);
  assert.deepEqual(outcome.trace.reasons, [{ iteration: 1, pointer: '/email', category: 'format' }]);
  assert.equal((await mock.requests()).length, 2);
});

test('need-more-input: no data, the need says what is missing', async () => {
  await mock.reply(need('the country'));
  const outcome = await structure.structure({ prompt, schema: 'contact', schemaMode: 'named' });
  assert.equal(outcome.status, 'need-more-input');
  assert.equal(outcome.need, 'the country');
  assert.equal('data' in outcome, false);

  // A required email address the text lacks is asked for before any LLM call (grounding).
  const grounded = await structure.structure({ prompt: 'Ada Lovelace', schema: 'contact', schemaMode: 'named' });
  assert.equal(grounded.status, 'need-more-input');
  assert.match(grounded.need, /^the text gives no value for \/email/);
  assert.equal(grounded.usage.llmCalls, 0);
  assert.equal((await mock.requests()).length, 1);
});

test('stale: no valid answer within maxLoops, the last violations and no data', async () => {
  const schema = { type: 'object', properties: { age: { type: 'integer', minimum: 0 } }, required: ['age'] };
  await mock.reply(answer({ age: -1 }));
  await mock.reply(answer({ age: -2 }));
  const outcome = await structure.structure({ prompt: 'age minus two', schema, maxLoops: 2 });
  assert.equal(outcome.status, 'stale');
  assert.equal(outcome.iterations, 2);
  assert.equal('data' in outcome, false);
  assert.match(outcome.errors.join('\n'), /\/age/);
});

test('errors are StructureErrors with the WIT kind and its detail', async () => {
  const notFound = await structure.structure({ prompt, schema: 'contakt', schemaMode: 'named' }).catch((e) => e);
  assert.ok(notFound instanceof StructureError);
  assert.equal(notFound.kind, 'schema-not-found');
  assert.deepEqual(notFound.detail.suggestions, ['contact']);

  await mock.reply(providerError(401, 'invalid_api_key', 'Incorrect API key provided.'));
  const denied = await structure.structure({ prompt, schema: 'contact', schemaMode: 'named' }).catch((e) => e);
  assert.equal(denied.kind, 'provider');
  assert.equal(denied.detail.status, 401);
  assert.equal(denied.detail.retryable, false);
  assert.equal(denied.usage.llmCalls, 1);

  // maxLoops reaches the component as JSON: a string or an out-of-range number is refused, not wrapped.
  for (const maxLoops of ['3', 266, 0]) {
    const refused = await structure
      .structure({ prompt, schema: 'contact', schemaMode: 'named', maxLoops })
      .catch((e) => e);
    assert.equal(refused.kind, 'invalid-request', `maxLoops ${JSON.stringify(maxLoops)}`);
    assert.equal(refused.detail, 'maxLoops');
  }
  assert.equal((await mock.requests()).length, 1, 'refused requests make no LLM call');
});

test('a configuration error names the missing setting', async () => {
  const unconfigured = await createStructure({ config: { structure_model: 'anthropic/claude-sonnet-4-5' } });
  const error = await unconfigured.structure({ prompt, schema: 'contact', schemaMode: 'named' }).catch((e) => e);
  assert.equal(error.kind, 'configuration');
  assert.equal(error.detail, 'anthropic_api_key');
});

// The builder's answer: properties as [{key, value}] pairs, the provider-strict form of an object map.
const strictForm = (schema) =>
  Array.isArray(schema) || typeof schema !== 'object' || schema === null
    ? schema
    : Object.fromEntries(
        Object.entries(schema).map(([key, value]) => [
          key,
          key === 'properties'
            ? Object.entries(value).map(([name, sub]) => ({ key: name, value: strictForm(sub) }))
            : strictForm(value),
        ]),
      );

test('text mode: the built schema is cached in the key-value store given', async () => {
  const schema = {
    type: 'object',
    properties: { name: { type: 'string' }, email: { type: 'string', format: 'email' } },
    required: ['name', 'email'],
    additionalProperties: false,
  };
  await mock.reply(
    completion(JSON.stringify({ schema: strictForm(schema), confidence: 0.95, clarifyingQuestions: [] })),
  );
  await mock.reply(answer({ name: 'Ada Lovelace', email: 'ada@example.org' }));
  const first = await structure.structure({ prompt, schema: "A person's name and email.", schemaMode: 'text' });
  assert.equal(first.status, 'ok');
  assert.equal(first.schemaOrigin, 'inferred');
  assert.equal(first.trace.schemaBuilder.cacheHit, false);
  assert.equal(first.usage.llmCalls, 2);
  assert.ok(
    [...store.keys()].some((key) => key.startsWith('t/default/builder-cache/')),
    [...store.keys()].join(),
  );

  await mock.reply(answer({ name: 'Alan Turing', email: 'alan@example.org' }));
  const second = await structure.structure({
    prompt: 'Alan Turing, alan@example.org',
    schema: "  a PERSON'S name  and email . ",
    schemaMode: 'text',
  });
  assert.equal(second.status, 'ok');
  assert.equal(second.trace.schemaBuilder.cacheHit, true);
  assert.equal(second.usage.llmCalls, 1);
  assert.equal((await mock.requests()).length, 3, 'no builder call on a cache hit');
});

test('a failing key-value store is a storage error, not an exception from the backend', async () => {
  const broken = await createStructure({
    config: { openai_base_url: mock.baseUrl, openai_api_key: 'sk' },
    keyValue: {
      get: () => {
        throw new Error('disk on fire');
      },
      set() {},
      delete() {},
      keys: () => {
        throw new Error('disk on fire');
      },
    },
  });
  const error = await broken.listSchemas().catch((e) => e);
  assert.ok(error instanceof StructureError, String(error));
  assert.equal(error.kind, 'storage');
  assert.match(error.message, /disk on fire/);
});

test('a key-value store that answers with a Promise is a typed error, not a hang', { timeout: 20000 }, async () => {
  const unexpected = [];
  const record = (error) => unexpected.push(error);
  process.on('unhandledRejection', record);
  process.on('uncaughtException', record);
  try {
    const asyncStore = await createStructure({
      config: { openai_base_url: mock.baseUrl, openai_api_key: 'sk' },
      keyValue: { get: async () => undefined, set: async () => {}, delete: async () => {}, keys: async () => [] },
    });
    for (const attempt of [asyncStore.listSchemas(), asyncStore.getSettings()]) {
      const error = await attempt.catch((e) => e);
      assert.ok(error instanceof StructureError, String(error));
      assert.equal(error.kind, 'storage');
      assert.match(error.message, /returned a Promise/);
    }
    await asyncStore.close();
    // The same store given to the component in this thread, as the browser build does.
    const direct = await createStructureWith(
      instantiate,
      (name) => readFile(new URL(`../dist/node/${name}`, import.meta.url)).then((bytes) => WebAssembly.compile(bytes)),
      {
        config: {},
        keyValue: { get: async () => undefined, set: async () => {}, delete: async () => {}, keys: async () => [] },
      },
    );
    const error = await direct.listSchemas().catch((e) => e);
    assert.ok(error instanceof StructureError, String(error));
    assert.equal(error.kind, 'storage');
    assert.match(error.message, /keyValue.keys\(\) returned a Promise/);
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    process.off('unhandledRejection', record);
    process.off('uncaughtException', record);
  }
  assert.deepEqual(unexpected, []);
});

test('a key-value backend without keys() is refused when the client is made', async () => {
  await assert.rejects(
    createStructure({ config: {}, keyValue: { get() {}, set() {}, delete() {} } }),
    /keyValue must have get, set, delete and keys methods \(missing keys\)/,
  );
});

test('the registry and settings, per scope, in the store given', async () => {
  const project = structure.withScope({ tenant: 'acme', project: 'crm' });
  const info = await project.registerSchema({
    name: 'lead',
    schema: { type: 'object', properties: { company: { type: 'string' } }, required: ['company'] },
    manual: 'A sales lead.',
  });
  assert.deepEqual([info.name, info.origin, info.version, info.hasManual], ['lead', 'project:crm', '1.0', true]);
  assert.ok((await project.listSchemas()).some((schema) => schema.name === 'lead'));
  assert.equal((await project.getSchema('lead')).manual, 'A sales lead.');
  const otherTenant = structure.withScope({ tenant: 'globex' });
  assert.equal(
    (await otherTenant.listSchemas()).some((schema) => schema.name === 'lead'),
    false,
  );
  assert.equal((await otherTenant.getSchema('lead').catch((e) => e)).kind, 'schema-not-found');

  await mock.reply(answer({ company: 'Initech' }));
  const outcome = await project.structure({ prompt: 'A lead from Initech', schema: 'lead', schemaMode: 'named' });
  assert.equal(outcome.schemaOrigin, 'registry:project:crm');

  await project.setSettings({ maxLoops: 1 });
  assert.equal((await project.getSettings()).effective.maxLoops, 1);
  assert.equal(await project.deregisterSchema('lead'), true);
  assert.equal(await project.deregisterSchema('lead'), false);
});

test('the tool definition is the JSON to register with an agent framework', async () => {
  const definition = await structure.toolDefinition();
  assert.equal(definition.name, 'structure');
  assert.deepEqual(definition.parameters.required, ['schema']);
  assert.deepEqual(
    definition.parameters.anyOf.map((branch) => branch.required),
    [['prompt'], ['document']],
  );
});

test('calls made together run one at a time, in order', async () => {
  await mock.reply({ ...answer({ age: 1 }), delayMs: 100 });
  await mock.reply(answer({ age: 2 }));
  const schema = { type: 'object', properties: { age: { type: 'integer' } }, required: ['age'] };
  const outcomes = await Promise.all([
    structure.structure({ prompt: 'one', schema }),
    structure.structure({ prompt: 'two', schema }),
  ]);
  assert.deepEqual(
    outcomes.map((outcome) => outcome.data.age),
    [1, 2],
  );
});

test('structureEach: many requests, a few calls at a time, each result as its call ends', async () => {
  await mock.reply(answer(ada));
  await mock.reply(answer(ada));
  const items = [
    { id: 'a', prompt, schema: 'contact', schemaMode: 'named' },
    { id: 2, prompt, schema: 'no-such-schema', schemaMode: 'named' },
    { id: 'c', prompt, schema: 'contact', schemaMode: 'named' },
  ];
  async function* lazily() {
    yield* items;
  }
  const results = [];
  for await (const result of structure.structureEach(lazily(), { jobs: 2 })) {
    results.push(result);
  }
  const byId = Object.fromEntries(results.map((result) => [result.id, result]));
  assert.equal(results.length, 3);
  assert.deepEqual(byId.a.outcome.data, ada);
  assert.equal(byId.c.outcome.status, 'ok');
  assert.equal(byId[2].error.kind, 'schema-not-found');
  assert.equal((await mock.requests()).length, 2);
  await assert.rejects(
    async () => {
      for await (const _ of structure.structureEach(items, { jobs: 0 })) {
        // never reached
      }
    },
    { name: 'TypeError' },
  );
});

test('wasi:keyvalue/atomics: a swap writes only over the value its handle saw, else hands back a fresh handle', () => {
  const backend = memoryKeyValue();
  const { 'wasi:keyvalue/store': store, 'wasi:keyvalue/atomics': atomics } = keyValueImports(backend);
  const bucket = store.open('default');
  const first = atomics.Cas.new(bucket, 'n');
  assert.equal(first.current(), undefined);
  const other = atomics.Cas.new(bucket, 'n');
  atomics.swap(first, Uint8Array.of(1));
  assert.deepEqual([...backend.get('n')], [1]);
  let failed;
  try {
    atomics.swap(other, Uint8Array.of(9));
  } catch (error) {
    failed = error;
  }
  assert.equal(failed?.tag, 'cas-failed', 'another swap came first');
  assert.deepEqual([...failed.val.current()], [1]);
  atomics.swap(failed.val, Uint8Array.of(2));
  assert.deepEqual([...backend.get('n')], [2]);
  assert.equal(atomics.increment(bucket, 'count', 5n), 5n);
  assert.equal(atomics.increment(bucket, 'count', -2n), 3n);
  assert.throws(
    () => atomics.increment(bucket, 'n', 1n),
    (error) => error.tag === 'other',
  );
});
