// The demo page: builds a request from the form, runs it in the component and shows the outcome.
// `npm run demo` builds it into dist/demo and serves it.
import { createStructure, StructureError } from '../src/browser.js';

const $ = (id) => document.getElementById(id);
const SAVED = 'structure-demo:form';
const SAVED_FIELDS = ['endpoint', 'model', 'profile', 'max-loops', 'schema-mode'];

// One component instance per configuration: the endpoint, model and key are its config.
let instance = { key: null, structure: null };
function structureWith(config) {
  const key = JSON.stringify(config);
  if (instance.key !== key) {
    const structure = createStructure({ config, wasmBase: './wasm/' });
    structure.catch(() => (instance = { key: null, structure: null }));
    instance = { key, structure };
  }
  return instance.structure;
}

function config() {
  return {
    structure_model: $('model').value.trim(),
    openai_base_url: $('endpoint').value.trim(),
    openai_api_key: $('api-key').value || undefined,
    structure_provider_profile: $('profile').value || undefined,
  };
}

function request() {
  const mode = $('schema-mode').value;
  const maxLoops = $('max-loops').value;
  const [file] = $('document').files;
  const base = {
    prompt: $('prompt').value,
    maxLoops: maxLoops === '' ? undefined : Number(maxLoops),
    records: $('records').checked || undefined,
    // A PDF, a Word document, a web page or a text file is read inside the component (a PDF's
    // values come with their pages).
    ...(file ? { document: file, returnText: true } : {}),
  };
  if (mode === 'named') return { ...base, schema: $('schema-name').value, schemaMode: 'named' };
  if (mode === 'text') return { ...base, schema: $('schema-text').value, schemaMode: 'text' };
  try {
    return { ...base, schema: JSON.parse($('schema-json').value), schemaMode: 'json' };
  } catch (error) {
    throw new StructureError({
      kind: { tag: 'invalid-request', val: 'schema' },
      message: `the schema is not valid JSON: ${error.message}`,
    });
  }
}

function showSchemaInput() {
  const mode = $('schema-mode').value;
  $('schema-name').classList.toggle('hidden', mode !== 'named');
  $('schema-json').classList.toggle('hidden', mode !== 'json');
  $('schema-text').classList.toggle('hidden', mode !== 'text');
}

function show({ status, label, output, iterations = '–', llmCalls = '–', origin = '–', feedback = [], trace = '' }) {
  $('status').textContent = label ?? status;
  $('status').className = `badge ${status}`;
  $('iterations').textContent = iterations;
  $('llm-calls').textContent = llmCalls;
  $('origin').textContent = origin;
  $('output').textContent = output;
  $('feedback').replaceChildren(
    ...feedback.map((reason) => Object.assign(document.createElement('li'), { textContent: reason })),
  );
  $('trace').textContent = trace;
}

/** Records mode's data, then each record the text gives without a required value. */
function records(outcome) {
  const lacking = outcome.incomplete.map(({ record, need }) => `${JSON.stringify(record)}: ${need}`);
  const found = `${outcome.data.length} record(s):\n${JSON.stringify(outcome.data, null, 2)}`;
  return lacking.length ? `${found}\n\nIncomplete, not invented:\n${lacking.join('\n')}` : found;
}

/** Where each value of the data was read, by page when it came from a PDF. */
function whereRead(outcome) {
  const read = outcome.sources
    .filter((source) => source.text !== undefined)
    .map(({ pointer, text, page }) => `${pointer}: “${text}”${page ? ` (page ${page})` : ''}`);
  return read.length ? `\n\nRead from:\n${read.join('\n')}` : '';
}

function showOutcome(outcome) {
  const output = {
    ok: () =>
      (outcome.incomplete ? records(outcome) : JSON.stringify(outcome.data, null, 2)) +
      (outcome.text === undefined ? '' : whereRead(outcome)),
    'need-more-input': () => `The text does not say: ${outcome.need}`,
    stale: () => `No valid answer within the loops allowed. Last violations:\n${outcome.errors.join('\n')}`,
  }[outcome.status]();
  show({
    status: outcome.status,
    output,
    iterations: outcome.iterations,
    llmCalls: outcome.usage.llmCalls,
    origin: outcome.schemaOrigin,
    feedback: outcome.trace.feedback,
    trace: JSON.stringify(outcome.trace, null, 2),
  });
}

function showError(error) {
  const typed = error instanceof StructureError;
  show({
    status: 'error',
    label: typed ? `error: ${error.kind}` : 'error',
    output:
      typed && error.detail !== undefined
        ? `${error.message}\n\n${JSON.stringify(error.detail, null, 2)}`
        : String(error?.message ?? error),
  });
}

async function run() {
  localStorage.setItem(SAVED, JSON.stringify(Object.fromEntries(SAVED_FIELDS.map((id) => [id, $(id).value]))));
  document.body.dataset.state = 'running';
  $('run').disabled = true;
  try {
    const body = request();
    showOutcome(await (await structureWith(config())).structure(body));
  } catch (error) {
    showError(error);
  } finally {
    $('run').disabled = false;
    document.body.dataset.state = 'done';
    document.body.dataset.runs = String(Number(document.body.dataset.runs ?? 0) + 1);
  }
}

async function start() {
  const saved = JSON.parse(localStorage.getItem(SAVED) ?? '{}');
  for (const id of SAVED_FIELDS) if (saved[id] !== undefined) $(id).value = saved[id];
  showSchemaInput();
  $('schema-mode').addEventListener('change', showSchemaInput);
  $('run').addEventListener('click', run);
  try {
    const schemas = await (await structureWith(config())).listSchemas();
    $('schema-name').replaceChildren(
      ...schemas.map(({ name, description, origin }) =>
        Object.assign(document.createElement('option'), {
          value: name,
          textContent: `${name} (${origin})${description ? ` — ${description}` : ''}`,
        }),
      ),
    );
  } catch (error) {
    showError(error);
  }
  document.body.dataset.ready = 'true';
}

start();
