// The structure console: the registry, a playground that shows where each value came from
// (in the text, or boxed on a PDF's pages), insights per schema, and the review queue, all from the service's own
// API with the bearer token the person signs in with. Everything shown that came from the
// service (names, manuals, values, texts) goes into the page as text nodes, never as markup: a
// hostile manual stays text.

import { jsonErrorOffset, locate, pieces } from './locate.js';
import { renderMarkdown } from './markdown.js';

const $ = (id) => document.getElementById(id);
const TOKEN_KEY = 'structure-console-token';

/** An element with properties and children (strings become text nodes). */
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

const state = {
  token: null,
  me: null,
  schemas: [],
  current: null,
  etag: null,
  isNew: false,
  checkTimer: 0,
  checkSeq: 0,
  pages: null,
  pagesSeq: 0,
};

/** A request to the API with the token signed in with. */
const authorized = (path, init = {}) =>
  fetch(path, { ...init, headers: { authorization: `Bearer ${state.token}`, ...init.headers } });

/** A call of the API: status, JSON body (or null), text, ETag. */
async function api(path, { method = 'GET', body, headers = {} } = {}) {
  const init = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await authorized(path, init);
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: response.status, ok: response.ok, json, text, etag: response.headers.get('etag') };
}

const failure = (result) => result.json?.error?.message ?? `the service answered ${result.status}`;

// Sign-in ---------------------------------------------------------------------------------

async function signIn(token) {
  state.token = token;
  const me = await api('/v1/me');
  if (!me.ok) {
    state.token = null;
    sessionStorage.removeItem(TOKEN_KEY);
    $('signin-error').textContent = me.status === 401 ? 'That token is not known here.' : failure(me);
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  state.me = me.json;
  document.body.dataset.role = state.me.role;
  const where = state.me.project ? `${state.me.tenant} / ${state.me.project}` : state.me.tenant;
  $('who-text').textContent = `${where} · ${state.me.role}`;
  $('signin').hidden = true;
  $('tabs').hidden = false;
  $('who').hidden = false;
  $('token').value = '';
  await loadSchemas();
  showView('registry');
  document.body.dataset.signedIn = 'true';
}

function signOut() {
  sessionStorage.removeItem(TOKEN_KEY);
  state.token = null;
  state.me = null;
  for (const view of document.querySelectorAll('.view')) view.hidden = true;
  $('tabs').hidden = true;
  $('who').hidden = true;
  $('signin').hidden = false;
  document.body.dataset.signedIn = 'false';
  $('token').focus();
}

function showView(name) {
  for (const view of document.querySelectorAll('.view')) view.hidden = view.id !== name;
  for (const tab of document.querySelectorAll('.tab')) {
    tab.setAttribute('aria-pressed', String(tab.dataset.view === name));
  }
  if (name === 'playground') fillPlaygroundSchemas();
  if (name === 'insights') loadInsights();
  if (name === 'review') openReview();
}

/** The review page (console/review.js, imported the first time a reviewer opens it). */
async function openReview() {
  state.review ??= await import('./review.js');
  await state.review.show({ api, el, $ });
}

// Registry --------------------------------------------------------------------------------

async function loadSchemas() {
  const listed = await api('/v1/schemas');
  state.schemas = listed.ok ? listed.json.schemas : [];
  renderSchemaList();
}

function renderSchemaList() {
  const wanted = $('search').value.trim().toLowerCase();
  const rows = state.schemas
    .filter((schema) => !wanted || `${schema.name} ${schema.origin} ${schema.version}`.toLowerCase().includes(wanted))
    .map((schema) => {
      const open = el('button', { type: 'button', textContent: schema.name });
      open.addEventListener('click', () => openSchema(schema.name));
      const row = el(
        'tr',
        {},
        el('td', {}, open),
        el('td', { textContent: schema.origin }),
        el('td', { textContent: schema.version }),
      );
      if (state.current?.name === schema.name) row.className = 'selected';
      return row;
    });
  $('schemas').tBodies[0].replaceChildren(...rows);
}

async function openSchema(name) {
  const found = await api(`/v1/schemas/${encodeURIComponent(name)}`);
  if (!found.ok) {
    $('schema-empty').hidden = false;
    $('schema-empty').textContent = failure(found);
    return;
  }
  state.current = found.json;
  state.etag = found.etag;
  $('schema-empty').hidden = true;
  $('schema-edit').hidden = true;
  $('schema-view').hidden = false;
  $('view-name').textContent = found.json.name;
  $('view-origin').textContent = found.json.origin;
  $('view-version').textContent = found.json.version;
  $('view-schema').textContent = JSON.stringify(found.json.schema, null, 2);
  renderMarkdown(found.json.manual ?? '', $('view-manual'));
  const editable = found.json.origin !== 'bundled';
  $('edit-schema').textContent = editable ? 'Edit' : 'Override at my level';
  $('delete-schema').hidden = !editable;
  renderSchemaList();
}

/** The next minor version: 1.2 → 1.3. */
const nextMinor = (version) => {
  const [major, minor] = String(version ?? '1.0')
    .split('.')
    .map(Number);
  return Number.isInteger(major) && Number.isInteger(minor) ? `${major}.${minor + 1}` : '1.0';
};

function editSchema(isNew) {
  state.isNew = isNew;
  const current = isNew ? null : state.current;
  $('edit-title').textContent = isNew ? 'New schema' : `Edit ${current.name}`;
  $('edit-name').value = current?.name ?? '';
  $('edit-name').readOnly = !isNew;
  $('edit-version').value = isNew ? '1.0' : current.origin === 'bundled' ? current.version : nextMinor(current.version);
  $('edit-schema-json').value = JSON.stringify(
    current?.schema ?? { type: 'object', properties: {}, required: [] },
    null,
    2,
  );
  $('edit-manual').value = current?.manual ?? '';
  $('save-as-new').hidden = isNew;
  $('edit-status').textContent = '';
  renderMarkdown($('edit-manual').value, $('manual-preview'));
  $('schema-empty').hidden = true;
  $('schema-view').hidden = true;
  $('schema-edit').hidden = false;
  scheduleCheck(0);
  (isNew ? $('edit-name') : $('edit-schema-json')).focus();
}

function saveAsNewName() {
  const base = state.current?.name.replace(/-v\d+$/, '') ?? 'schema';
  const major = Number(String(state.current?.version ?? '1').split('.')[0]) + 1;
  state.isNew = true;
  $('edit-name').readOnly = false;
  $('edit-name').value = `${base}-v${major}`;
  $('edit-version').value = '1.0';
  $('edit-title').textContent = 'Save as a new schema (a major version)';
  $('save-as-new').hidden = true;
  $('edit-name').focus();
  scheduleCheck(0);
}

/** The registration the form holds, or why its schema is not JSON. */
function formRegistration() {
  const registration = { manual: $('edit-manual').value, version: $('edit-version').value.trim() };
  try {
    registration.schema = JSON.parse($('edit-schema-json').value);
  } catch (error) {
    return { error: error.message };
  }
  return { registration };
}

function scheduleCheck(delay = 350) {
  clearTimeout(state.checkTimer);
  state.checkTimer = setTimeout(checkSchema, delay);
}

/** Checks the form's schema as one types: JSON first, then the service's own checks. */
async function checkSchema() {
  const seq = ++state.checkSeq;
  const text = $('edit-schema-json').value;
  const { registration, error } = formRegistration();
  let problems;
  if (error) {
    problems = [{ pointer: null, message: `not JSON: ${error}`, at: jsonErrorOffset(error, text) }];
  } else {
    const name = $('edit-name').value.trim() || 'unnamed';
    const checked = await api(`/v1/schemas/${encodeURIComponent(name)}?check`, { method: 'PUT', body: registration });
    if (seq !== state.checkSeq) return;
    problems = checked.ok ? checked.json.problems : [{ pointer: null, message: failure(checked) }];
  }
  renderProblems(problems, text);
  document.body.dataset.checks = String(Number(document.body.dataset.checks ?? 0) + 1);
}

function renderProblems(problems, text) {
  const items = problems.map((problem) => {
    const at = problem.at === null || problem.at === undefined ? null : [problem.at, problem.at + 1];
    const range = problem.pointer === null ? at : locate(text, problem.pointer);
    const where = problem.pointer === null ? 'JSON' : problem.pointer || '(root)';
    const line = range ? ` (line ${text.slice(0, range[0]).split('\n').length})` : '';
    const go = el('button', { type: 'button', textContent: `${where}${line}` });
    go.dataset.pointer = problem.pointer ?? '';
    go.addEventListener('click', () => {
      const area = $('edit-schema-json');
      area.focus();
      if (range) area.setSelectionRange(range[0], range[1]);
    });
    return el('li', {}, go, `: ${problem.message}`);
  });
  $('problems').replaceChildren(...items);
  $('edit-schema-json').setAttribute('aria-invalid', String(problems.length > 0));
}

async function saveSchema(event) {
  event.preventDefault();
  const { registration, error } = formRegistration();
  if (error) {
    $('edit-status').textContent = `The schema is not JSON: ${error}`;
    return;
  }
  const name = $('edit-name').value.trim();
  const headers = !state.isNew && state.etag ? { 'if-match': state.etag } : {};
  const saved = await api(`/v1/schemas/${encodeURIComponent(name)}`, { method: 'PUT', body: registration, headers });
  if (saved.status === 409) {
    $('edit-status').replaceChildren(
      el('span', {
        className: 'error',
        textContent: 'Someone changed this schema since you opened it. Your edit was not saved. ',
      }),
      reloadButton(name),
    );
    return;
  }
  if (!saved.ok) {
    $('edit-status').replaceChildren(el('span', { className: 'error', textContent: failure(saved) }));
    return;
  }
  await loadSchemas();
  await openSchema(name);
  $('view-name').focus?.();
}

function reloadButton(name) {
  const reload = el('button', { type: 'button', textContent: 'Reload it' });
  reload.addEventListener('click', () => openSchema(name));
  return reload;
}

/** Asks before something that cannot be undone; true when confirmed. */
function confirmAction(text) {
  const dialog = $('confirm');
  $('confirm-text').textContent = text;
  return new Promise((resolve) => {
    const done = (answer) => {
      dialog.close();
      resolve(answer);
    };
    $('confirm-ok').onclick = () => done(true);
    $('confirm-cancel').onclick = () => done(false);
    dialog.oncancel = () => resolve(false);
    dialog.showModal();
    $('confirm-cancel').focus();
  });
}

async function deleteSchema() {
  const { name, origin } = state.current;
  const question = `Delete ${name} (${origin})? Callers that name it will get the level below, or an error.`;
  if (!(await confirmAction(question))) return;
  const headers = state.etag ? { 'if-match': state.etag } : {};
  const deleted = await api(`/v1/schemas/${encodeURIComponent(name)}`, { method: 'DELETE', headers });
  if (!deleted.ok) {
    $('schema-empty').hidden = false;
    $('schema-empty').textContent = failure(deleted);
    return;
  }
  state.current = null;
  $('schema-view').hidden = true;
  $('schema-empty').hidden = false;
  $('schema-empty').textContent = `${name} was deleted.`;
  await loadSchemas();
}

// Playground ------------------------------------------------------------------------------

function fillPlaygroundSchemas() {
  const select = $('play-schema');
  const chosen = select.value;
  const options = state.schemas.map((schema) =>
    el('option', { value: schema.name, textContent: `${schema.name} (${schema.origin})` }),
  );
  options.push(el('option', { value: '', textContent: 'inline JSON schema…' }));
  select.replaceChildren(...options);
  if (chosen) select.value = chosen;
  $('play-inline-label').hidden = select.value !== '';
}

/**
 * The call's arguments, and the picked document's bytes (else null). The component tells what
 * the document is from its name or its bytes; its pages are drawn only when it had pages.
 */
async function playgroundArguments() {
  const name = $('play-schema').value;
  const args = { prompt: $('play-text').value, returnText: true };
  if (name) Object.assign(args, { schema: name, schemaMode: 'named' });
  else Object.assign(args, { schema: JSON.parse($('play-inline').value), schemaMode: 'json' });
  const [file] = $('play-document').files;
  if (!file) return { args, pdf: null };
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  args.document = { name: file.name, data: btoa(binary) };
  return { args, pdf: bytes };
}

async function run(event) {
  event.preventDefault();
  $('play-run').disabled = true;
  let result;
  let pdf = null;
  try {
    const call = await playgroundArguments();
    pdf = call.pdf;
    result = await api('/v1/structure', { method: 'POST', body: call.args });
  } catch (error) {
    result = { ok: false, status: 0, json: { error: { kind: 'invalid-request', message: error.message } } };
  }
  $('play-run').disabled = false;
  renderResult(result, pdf);
  document.body.dataset.runs = String(Number(document.body.dataset.runs ?? 0) + 1);
}

/** A result: its status, its data as a tree, where each value came from, what was fed back. */
function renderResult(result, pdf) {
  $('play-result').hidden = false;
  const outcome = result.json ?? {};
  const error = outcome.error;
  $('play-status').textContent = error ? `error: ${error.kind}` : outcome.status;
  $('play-iterations').textContent = String(outcome.iterations ?? 0);
  const usage = (error ? error.usage : outcome.usage) ?? {};
  const tokens = `${usage.promptTokens ?? 0} prompt + ${usage.completionTokens ?? 0} completion tokens`;
  $('play-usage').textContent = `${usage.llmCalls ?? 0} LLM calls, ${tokens}`;
  const stillInvalid = () => (outcome.errors ?? []).map((e) => e.message ?? JSON.stringify(e)).join('; ');
  const given =
    outcome.partial === undefined ? '' : '. What it does give is below (not valid against the schema without it).';
  $('play-message').textContent = error
    ? error.message
    : outcome.status === 'need-more-input'
      ? `The text lacks: ${outcome.need}${given}`
      : outcome.status === 'stale'
        ? `Still invalid after the last iteration: ${stillInvalid()}`
        : '';
  const shown = outcome.data ?? outcome.partial;
  $('play-data').replaceChildren(
    shown === undefined ? el('p', { className: 'hint', textContent: 'No data.' }) : tree(shown, ''),
  );
  const sources = outcome.sources ?? [];
  renderText(outcome.text ?? $('play-text').value, sources);
  renderSheets(error ? '' : (outcome.text ?? ''), sources);
  const pages = outcome.trace?.pageSizes ?? [];
  renderPages(error || pages.length === 0 ? null : pdf, sources, pages);
  $('play-derived').replaceChildren(
    ...sources
      .filter((source) => source.utf16Start === undefined)
      .map((source) => el('li', { textContent: `derived: ${source.pointer}` })),
  );
  renderIterations(outcome.trace ?? {});
}

/** `data` as a tree: each leaf names its pointer, and lights up its span when pointed at. */
function tree(value, pointer) {
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((item, i) => [String(i), item]) : Object.entries(value);
    return el(
      'ul',
      {},
      ...entries.map(([key, child]) => {
        const childPointer = `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
        return el('li', {}, el('span', { className: 'key', textContent: `${key}: ` }), tree(child, childPointer));
      }),
    );
  }
  const leaf = el('span', { className: 'leaf', tabIndex: 0, textContent: JSON.stringify(value) });
  leaf.dataset.pointer = pointer;
  leaf.dataset.pointers = JSON.stringify([pointer]);
  link(leaf, [pointer]);
  return leaf;
}

/**
 * Ties `node` (a value, a mark in the text, a box on a page) to the values at `pointers`: pointed
 * at, it lights them wherever they are shown; clicked or focused, it keeps them lit and brings
 * the first of them into view in each of the other views.
 */
function link(node, pointers) {
  const lightAll = (lit) => {
    for (const pointer of pointers) light(pointer, lit);
  };
  node.addEventListener('mouseenter', () => lightAll(true));
  node.addEventListener('mouseleave', () => lightAll(node === document.activeElement));
  node.addEventListener('focus', () => {
    lightAll(true);
    reveal(node);
  });
  node.addEventListener('blur', () => lightAll(false));
}

/** Lights (or puts out) every place the value at `pointer` is shown: the data, the text, the pages. */
function light(pointer, lit) {
  for (const node of document.querySelectorAll('#play-result [data-pointers]')) {
    if (JSON.parse(node.dataset.pointers).includes(pointer)) node.classList.toggle('active', lit);
  }
}

/** Brings the first lit place of each view other than `from`'s into view, scrolling only that view. */
function reveal(from) {
  for (const view of [$('play-data'), $('play-text-view'), $('play-pages'), $('play-sheet')]) {
    const first = view.contains(from) ? null : view.querySelector('.active');
    if (!first || first.getClientRects().length === 0) continue;
    if (view.scrollHeight <= view.clientHeight) {
      first.scrollIntoView({ block: 'nearest' });
      continue;
    }
    const [outer, inner] = [view.getBoundingClientRect(), first.getBoundingClientRect()];
    if (inner.top < outer.top || inner.bottom > outer.bottom) {
      view.scrollTop += inner.top - outer.top - (outer.height - inner.height) / 2;
    }
  }
}

/**
 * The text with each source's span marked: cut at every span's ends, each piece marked with the
 * sources covering it.
 */
function renderText(text, sources) {
  const marked = pieces(text, sources).map(({ start, end, covering }) => {
    if (covering.length === 0) return text.slice(start, end);
    const kind = covering.some((span) => span.match === 'exact') ? 'exact' : 'normalized';
    const mark = el('mark', {
      className: `m-${kind}`,
      textContent: text.slice(start, end),
      title: covering.map((span) => `${span.pointer} (${span.match})`).join(', '),
    });
    const pointers = covering.map((span) => span.pointer);
    mark.dataset.pointers = JSON.stringify(pointers);
    mark.tabIndex = -1;
    link(mark, pointers);
    return mark;
  });
  $('play-text-view').replaceChildren(...marked);
}

/**
 * A spreadsheet's sheets as grids beside the data (its values name their cells): each sheet of
 * the text read (`Sheet: <name>`, then a row a line, its cells parted by tabs), each cell that
 * holds a value lit with it. A row's number is the one its values' cells name.
 */
function renderSheets(text, sources) {
  const view = $('play-sheet');
  const placed = sources.filter((source) => source.cell && source.utf16Start !== undefined);
  view.hidden = placed.length === 0;
  if (view.hidden) {
    view.replaceChildren();
    return;
  }
  const sheets = [];
  let offset = 0;
  for (const line of text.split('\n')) {
    const start = offset;
    offset += line.length + 1;
    if (line.startsWith('Sheet: ')) sheets.push({ name: line.slice(7), rows: [] });
    else if (sheets.length > 0 && line !== '') sheets.at(-1).rows.push({ start, cells: line.split('\t') });
  }
  view.replaceChildren(...sheets.map((sheet) => sheetGrid(sheet, placed)));
}

/** One sheet as a table: column letters above, row numbers beside, each value's cell lit. */
function sheetGrid(sheet, placed) {
  const width = Math.max(0, ...sheet.rows.map((row) => row.cells.length));
  const letter = (n) => (n < 26 ? '' : letter(Math.floor(n / 26) - 1)) + String.fromCharCode(65 + (n % 26));
  const head = el('tr', {}, el('th'), ...Array.from({ length: width }, (_, n) => el('th', { textContent: letter(n) })));
  const rows = sheet.rows.map((row) => {
    let at = row.start;
    const cells = row.cells.map((written) => {
      const [start, end] = [at, at + written.length];
      at = end + 1;
      const here = placed.filter(
        (source) => source.utf16Start >= start && source.utf16Start < Math.max(end, start + 1),
      );
      const td = el('td', { textContent: written });
      if (here.length > 0) {
        const pointers = here.map((source) => source.pointer);
        td.className = here.some((source) => source.match === 'exact') ? 'm-exact' : 'm-normalized';
        td.title = here.map((source) => `${source.pointer} (${source.cell})`).join(', ');
        td.dataset.pointers = JSON.stringify(pointers);
        td.tabIndex = -1;
        link(td, pointers);
      }
      return { td, here };
    });
    const named = cells.flatMap((cell) => cell.here).map((source) => source.cell.match(/(\d+)$/)?.[1])[0];
    return el('tr', {}, el('th', { textContent: named ?? '' }), ...cells.map((cell) => cell.td));
  });
  return el('table', {}, el('caption', { textContent: sheet.name }), el('thead', {}, head), el('tbody', {}, ...rows));
}

/**
 * A PDF's pages beside the data, each value's boxes on them (console/pages.js, imported with
 * pdf.js only now); for a text, or an error, the text view alone. The text read from a PDF stays
 * a click away. `body[data-pages]` counts the PDFs laid out, for the tests.
 */
async function renderPages(pdf, sources, sizes) {
  const seq = ++state.pagesSeq;
  const view = $('play-pages');
  view.hidden = !pdf;
  $('play-text-summary').hidden = !pdf;
  $('play-text-fold').open = !pdf;
  if (!pdf) {
    await state.pages?.showPages(view, null);
    return;
  }
  view.replaceChildren(el('p', { className: 'hint', textContent: 'Drawing the pages…' }));
  try {
    state.pages ??= await import('./pages.js');
    if (seq !== state.pagesSeq) return;
    if (!(await state.pages.showPages(view, pdf, sources, sizes, link))) return;
    document.body.dataset.pages = String(Number(document.body.dataset.pages ?? 0) + 1);
  } catch (error) {
    if (seq !== state.pagesSeq) return;
    const why = `The pages could not be drawn here (${error.message}); the text read from them is below.`;
    view.replaceChildren(el('p', { className: 'error', textContent: why }));
    $('play-text-fold').open = true;
  }
}

function renderIterations(trace) {
  const reasons = trace.reasons ?? [];
  const feedback = trace.feedback ?? [];
  const count = Math.max(0, ...reasons.map((reason) => reason.iteration));
  const items = [];
  for (let iteration = 1; iteration <= count; iteration++) {
    const own = reasons.filter((reason) => reason.iteration === iteration);
    items.push(
      el(
        'li',
        {},
        `Answer ${iteration} broke ${own.length} rule(s); fed back: `,
        el(
          'ul',
          {},
          ...own.map((reason) => el('li', { textContent: `${reason.pointer || '(root)'}: ${reason.category}` })),
        ),
        feedback[iteration - 1] ? el('pre', { textContent: feedback[iteration - 1] }) : null,
      ),
    );
  }
  if (items.length === 0) items.push(el('li', { textContent: 'The first answer was valid: nothing was fed back.' }));
  $('play-iteration-list').replaceChildren(...items);
}

// Insights --------------------------------------------------------------------------------

async function loadInsights() {
  const loaded = await api(`/v1/insights?window=${$('window').value}`);
  const schemas = loaded.ok ? loaded.json.schemas : [];
  state.insights = schemas;
  const rows = schemas.map((schema) => {
    const open = el('button', { type: 'button', textContent: schema.schema });
    open.addEventListener('click', () => showInsight(schema));
    const status = (name) => String(schema.statuses[name] ?? 0);
    const cells = [
      String(schema.calls),
      status('ok'),
      status('need-more-input'),
      status('stale'),
      status('error'),
      schema.meanIterations.toFixed(2),
      String(schema.latencyMs.p50 ?? '> 60000'),
      String(schema.latencyMs.p95 ?? '> 60000'),
      String(schema.promptTokens + schema.completionTokens),
    ];
    return el('tr', {}, el('td', {}, open), ...cells.map((cell) => el('td', { textContent: cell })));
  });
  $('insight-table').tBodies[0].replaceChildren(...rows);
  $('insight-empty').hidden = schemas.length > 0;
  $('insight-detail').hidden = true;
  document.body.dataset.insights = String(Number(document.body.dataset.insights ?? 0) + 1);
}

function showInsight(schema) {
  $('insight-detail').hidden = false;
  $('insight-name').textContent = `${schema.schema} · ${schema.calls} call${schema.calls === 1 ? '' : 's'}`;
  const statuses = ['ok', 'need-more-input', 'stale', 'error'].map((name) => [name, schema.statuses[name] ?? 0]);
  $('chart-status').replaceChildren(barChart(statuses, ['#2e9d57', '#d9a400', '#e06c1f', '#b3261e']));
  $('chart-iterations').replaceChildren(
    barChart(
      schema.iterations.map((bar) => [String(bar.iterations), bar.calls]),
      ['#2457c5'],
    ),
  );
  const list = (items, key) =>
    items.length
      ? items.map((item) => el('li', { textContent: `${item[key] || '(root)'}: ${item.count}` }))
      : [el('li', { textContent: 'none' })];
  $('top-reasons').replaceChildren(...list(schema.reasons, 'category'));
  $('top-pointers').replaceChildren(...list(schema.pointers, 'pointer'));
  showCorrections(schema.schema);
}

/** What reviewers corrected in the schema named `name`, per field: for those who may read the review queue. */
async function showCorrections(name) {
  const may = ['admin', 'reviewer'].includes(state.me?.role);
  $('insight-corrections-box').hidden = !may;
  if (!may) return;
  const loaded = await api('/v1/review/corrections');
  const schema = (loaded.ok ? loaded.json.schemas : []).find((entry) => entry.schema === name);
  const items = (schema?.fields ?? []).map((field) =>
    el('li', { textContent: `${field.pointer}: ${field.corrected} of ${schema.reviewed} reviewed` }),
  );
  const none = schema ? `none of ${schema.reviewed} reviewed` : 'none reviewed yet';
  $('insight-corrections').replaceChildren(...(items.length ? items : [el('li', { textContent: none })]));
  document.body.dataset.insightCorrections = name;
}

/** Bars of `[label, count]`, one colour each (cycling), each labelled with its count. */
function barChart(bars, colours) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = (tag, attributes, text) => {
    const node = document.createElementNS(ns, tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const [width, height, bottom] = [360, 170, 30];
  const most = Math.max(1, ...bars.map(([, count]) => count));
  const step = width / Math.max(1, bars.length);
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img' });
  chart.append(svg('title', {}, bars.map(([label, count]) => `${label}: ${count}`).join(', ')));
  bars.forEach(([label, count], i) => {
    const barHeight = ((height - bottom - 20) * count) / most;
    const x = i * step + step * 0.15;
    const y = height - bottom - barHeight;
    const bar = svg('rect', { x, y, width: step * 0.7, height: barHeight, fill: colours[i % colours.length] });
    bar.dataset.label = label;
    bar.dataset.count = String(count);
    const caption = (atY, text) =>
      svg('text', { x: x + step * 0.35, y: atY, 'text-anchor': 'middle', 'font-size': 12 }, text);
    chart.append(bar, caption(y - 4, String(count)));
    chart.append(caption(height - 10, label));
  });
  return chart;
}

async function exportCsv() {
  const window = $('window').value;
  const response = await authorized(`/v1/insights?window=${window}&format=csv`);
  const link = el('a', {
    href: URL.createObjectURL(await response.blob()),
    download: `structure-insights-${window}.csv`,
  });
  document.body.append(link);
  link.click();
  link.remove();
}

// Wiring ----------------------------------------------------------------------------------

$('signin-form').addEventListener('submit', (event) => {
  event.preventDefault();
  $('signin-error').textContent = '';
  signIn($('token').value.trim());
});
$('sign-out').addEventListener('click', signOut);
for (const tab of document.querySelectorAll('.tab')) tab.addEventListener('click', () => showView(tab.dataset.view));
$('search').addEventListener('input', renderSchemaList);
$('new-schema').addEventListener('click', () => editSchema(true));
$('edit-schema').addEventListener('click', () => editSchema(false));
$('delete-schema').addEventListener('click', deleteSchema);
$('save-as-new').addEventListener('click', saveAsNewName);
$('cancel-edit').addEventListener('click', () => {
  if (state.current) openSchema(state.current.name);
  else $('schema-edit').hidden = true;
});
$('schema-edit').addEventListener('submit', saveSchema);
for (const id of ['edit-schema-json', 'edit-version', 'edit-name']) {
  $(id).addEventListener('input', () => scheduleCheck());
}
$('edit-manual').addEventListener('input', () => {
  renderMarkdown($('edit-manual').value, $('manual-preview'));
  scheduleCheck();
});
$('play-schema').addEventListener('change', () => ($('play-inline-label').hidden = $('play-schema').value !== ''));
$('play-form').addEventListener('submit', run);
$('window').addEventListener('change', loadInsights);
$('export-csv').addEventListener('click', exportCsv);
$('review-save').addEventListener('click', () => state.review?.save());
$('review-back').addEventListener('click', openReview);
$('review-example').addEventListener('click', () => state.review?.keepAsExample());
document.addEventListener('keydown', (event) => state.review?.onKey(event));

const kept = sessionStorage.getItem(TOKEN_KEY);
if (kept) signIn(kept).finally(() => (document.body.dataset.ready = 'true'));
else document.body.dataset.ready = 'true';
