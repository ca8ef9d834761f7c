// The review page (imported when a reviewer opens it): the queue's pending items, and one item
// at a time — its text with each value marked, the values in doubt first, each accepted, edited
// or removed from the keyboard (a, e, r; n and p to move; s to save). The service checks an edit
// against the schema and its rules before it saves anything: what it refuses is shown at its
// value. Everything from the service goes into the page as text, never as markup.

import { pieces, tokens } from './locate.js';

let ctx;
const view = { item: null, rows: [], at: 0 };

/** Shows the pending items; `context` is the console's `{ api, el, $ }`. */
export async function show(context) {
  ctx = context;
  const { $ } = ctx;
  $('review-item').hidden = true;
  $('review-list').hidden = false;
  $('review-message').textContent = '';
  const listed = await ctx.api('/v1/review?status=pending');
  const claimed = await ctx.api('/v1/review?status=claimed');
  const items = [...(listed.json?.items ?? []), ...(claimed.json?.items ?? [])];
  $('review-empty').hidden = items.length > 0;
  $('review-items')
    .querySelector('tbody')
    .replaceChildren(...items.map(itemRow));
  if (!listed.ok)
    $('review-message').textContent = listed.json?.error?.message ?? `the service answered ${listed.status}`;
  const corrections = await ctx.api('/v1/review/corrections');
  const rows = (corrections.json?.schemas ?? []).flatMap((schema) =>
    schema.fields.map((field) => correctionRow(schema, field)),
  );
  $('review-corrections')
    .querySelector('tbody')
    .replaceChildren(...rows);
}

/** A field's corrections: how often, and the latest change from the model's value to the reviewer's. */
function correctionRow(schema, field) {
  const { el } = ctx;
  const latest = field.changes.at(-1);
  const change = latest ? `${JSON.stringify(latest.from)} → ${JSON.stringify(latest.to)}` : '';
  return el(
    'tr',
    {},
    el('td', { textContent: schema.schema }),
    el('td', { textContent: field.pointer }),
    el('td', { textContent: `${field.corrected} of ${schema.reviewed} reviewed` }),
    el('td', { textContent: change }),
  );
}

function itemRow(item) {
  const { el } = ctx;
  const open = el('button', { type: 'button', textContent: item.id.slice(0, 8) });
  open.addEventListener('click', () => openItem(item.id));
  const held = item.claim ? `${item.claim.by} since ${item.claim.at}` : '';
  return el(
    'tr',
    {},
    el('td', {}, open),
    el('td', { textContent: item.schemaName }),
    el('td', { textContent: item.created }),
    el('td', { textContent: String(item.fields.length) }),
    el('td', { textContent: held }),
  );
}

/** Claims item `id` and shows it; `body[data-review-paint]` says how long until it was drawn (ms). */
async function openItem(id) {
  const { $ } = ctx;
  const started = performance.now();
  const claimed = await ctx.api(`/v1/review/${id}/claim`, { method: 'POST' });
  if (!claimed.ok) {
    $('review-message').textContent = claimed.json?.error?.message ?? `the service answered ${claimed.status}`;
    return;
  }
  render(claimed.json);
  requestAnimationFrame(() => {
    document.body.dataset.reviewPaint = String(Math.round(performance.now() - started));
  });
}

/** The values of `data` by pointer, from the result's sources and the fields in doubt. */
function valueRows(item) {
  const data = item.result.data ?? item.result.partial ?? {};
  const doubts = new Map(item.fields.filter((field) => field.pointer).map((field) => [field.pointer, field.reason]));
  const pointers = [...doubts.keys()];
  for (const source of item.result.sources ?? []) if (!pointers.includes(source.pointer)) pointers.push(source.pointer);
  return pointers
    .filter((pointer) => valueAt(data, pointer) !== undefined)
    .map((pointer) => ({ pointer, value: valueAt(data, pointer), reason: doubts.get(pointer), state: 'open' }));
}

function render(item) {
  const { $, el } = ctx;
  view.item = item;
  view.rows = valueRows(item);
  view.at = 0;
  $('review-list').hidden = true;
  $('review-item').hidden = false;
  $('review-message').textContent = '';
  $('review-problems').replaceChildren();
  $('review-save').disabled = false;
  $('review-example').hidden = true;
  $('review-title').textContent = `${item.schemaName} · ${item.id}`;
  const whole = item.fields.filter((field) => !field.pointer).map((field) => field.reason);
  $('review-whole').replaceChildren(...whole.map((reason) => el('li', { textContent: reason })));
  $('review-values').replaceChildren(...view.rows.map(valueRow));
  renderText(
    item.text,
    item.result.sources ?? [],
    new Set(view.rows.filter((row) => row.reason).map((row) => row.pointer)),
  );
  focusRow(0);
  renderPages(item);
}

/**
 * A PDF item's pages, each value boxed where it stands (console/pages.js with pdf.js, imported
 * now); the text read stays below. `body[data-review-pages]` says they are drawn, for the tests.
 */
async function renderPages(item) {
  const { $, el } = ctx;
  const pagesView = $('review-pages');
  const pdf = item.document?.mediaType === 'application/pdf' ? item.document.data : null;
  pagesView.hidden = !pdf;
  if (!pdf) return;
  pagesView.replaceChildren(el('p', { className: 'hint', textContent: 'Drawing the pages…' }));
  try {
    const bytes = Uint8Array.from(atob(pdf), (c) => c.charCodeAt(0));
    const pages = await import('./pages.js');
    if (view.item !== item) return;
    const sources = item.result.sources ?? [];
    const drawn = await pages.showPages(pagesView, bytes, sources, item.result.trace?.pageSizes, () => {});
    if (!drawn || view.item !== item) return;
    const doubtful = new Set(view.rows.filter((row) => row.reason).map((row) => row.pointer));
    for (const box of pagesView.querySelectorAll('.box')) {
      const pointers = JSON.parse(box.dataset.pointers);
      box.classList.toggle(
        'm-doubt',
        pointers.some((pointer) => doubtful.has(pointer)),
      );
    }
    document.body.dataset.reviewPages = item.id;
  } catch (error) {
    const why = `The pages could not be drawn (${error.message}).`;
    pagesView.replaceChildren(el('p', { className: 'error', textContent: why }));
  }
}

function valueRow(row, index) {
  const { el } = ctx;
  const input = el('input', { value: written(row.value), 'aria-label': `value of ${row.pointer}` });
  input.addEventListener('input', () => setState(index, 'edited'));
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      setState(index, 'edited');
      focusRow(index + 1);
    }
  });
  row.input = input;
  const node = el(
    'li',
    { className: row.reason ? 'doubt' : '', tabIndex: -1 },
    el('code', { textContent: row.pointer }),
    input,
    el('span', { className: 'state', textContent: row.reason ? 'to check' : '' }),
    row.reason ? el('span', { className: 'reason', textContent: row.reason }) : null,
  );
  node.dataset.pointer = row.pointer;
  node.addEventListener('focus', () => (view.at = index));
  row.node = node;
  return node;
}

function setState(index, state) {
  const row = view.rows[index];
  if (!row) return;
  row.state = state;
  row.node.dataset.state = state;
  row.node.querySelector('.state').textContent = { accepted: 'accepted', edited: 'edited', removed: 'removed' }[state];
}

function focusRow(index) {
  if (view.rows.length === 0) return;
  view.at = Math.max(0, Math.min(index, view.rows.length - 1));
  view.rows[view.at].node.focus();
}

/** The keys of the page: a accept, e edit, r remove, n/p next/previous, s save. */
export function onKey(event) {
  if (!view.item || ctx.$('review-item').hidden || event.target.tagName === 'INPUT') return;
  const act = {
    a: () => {
      setState(view.at, 'accepted');
      focusRow(view.at + 1);
    },
    e: () => view.rows[view.at]?.input.select(),
    r: () => setState(view.at, 'removed'),
    n: () => focusRow(view.at + 1),
    p: () => focusRow(view.at - 1),
    s: () => save(),
  }[event.key];
  if (!act || event.ctrlKey || event.metaKey || event.altKey) return;
  event.preventDefault();
  act();
}

/** Sends the data as reviewed: each edited value as written, each removed one left out. */
export async function save() {
  const { $, el } = ctx;
  const item = view.item;
  const data = structuredClone(item.result.data ?? item.result.partial ?? {});
  for (const row of view.rows) {
    if (row.state === 'removed') removeAt(data, row.pointer);
    else if (row.state === 'edited') setAt(data, row.pointer, read(row.input.value, row.value));
  }
  const saved = await ctx.api(`/v1/review/${item.id}`, { method: 'POST', body: { data } });
  for (const row of view.rows) row.node.classList.remove('refused');
  if (saved.status === 422) {
    const problems = saved.json.error.problems ?? [];
    $('review-problems').replaceChildren(
      ...problems.map((problem) => {
        const where = problem.pointer === '' || problem.pointer === '/' ? 'the whole' : problem.pointer;
        return el('li', { textContent: `${where}: ${problem.message}` });
      }),
    );
    for (const problem of problems) {
      view.rows.find((row) => row.pointer === problem.pointer)?.node.classList.add('refused');
    }
    $('review-message').textContent = 'Not saved: the edit breaks the schema.';
    return;
  }
  if (!saved.ok) {
    $('review-message').textContent = saved.json?.error?.message ?? `the service answered ${saved.status}`;
    return;
  }
  const reviewed = saved.json.reviewed;
  $('review-problems').replaceChildren();
  $('review-message').textContent = `Reviewed by ${reviewed.by} at ${reviewed.at}.`;
  $('review-save').disabled = true;
  // A schema of the registry keeps the reviewed data as an example (an admin's to do).
  $('review-example').hidden = ['inline', 'described', 'examples'].includes(item.schemaName);
  document.body.dataset.reviewed = saved.json.id;
}

/** The text read, each value's span marked; the values in doubt marked as such. */
function renderText(text, sources, doubtful) {
  const { $, el } = ctx;
  const marked = pieces(text, sources).map(({ start, end, covering }) => {
    if (covering.length === 0) return text.slice(start, end);
    const doubt = covering.some((span) => doubtful.has(span.pointer));
    return el('mark', { className: doubt ? 'm-doubt' : 'm-exact', textContent: text.slice(start, end) });
  });
  $('review-text').replaceChildren(...marked);
}

const written = (value) => (typeof value === 'string' ? value : JSON.stringify(value));

/** What the reviewer typed, as the value it replaces was: a number stays a number where it reads as one. */
function read(typed, was) {
  if (typeof was === 'string') return typed;
  try {
    return JSON.parse(typed);
  } catch {
    return typed;
  }
}

const segments = (pointer) => tokens(pointer) ?? [];

function valueAt(data, pointer) {
  let value = data;
  for (const segment of segments(pointer)) {
    if (value === null || typeof value !== 'object') return undefined;
    value = value[segment];
  }
  return value;
}

function setAt(data, pointer, value) {
  const path = segments(pointer);
  const last = path.pop();
  const parent = path.reduce((node, segment) => node?.[segment], data);
  if (parent && typeof parent === 'object') parent[last] = value;
}

function removeAt(data, pointer) {
  const path = segments(pointer);
  const last = path.pop();
  const parent = path.reduce((node, segment) => node?.[segment], data);
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else if (parent && typeof parent === 'object') delete parent[last];
}

/** Makes the reviewed data an example of the item's registered schema (its next minor version). */
export async function keepAsExample() {
  const { $ } = ctx;
  const item = view.item;
  const made = await ctx.api(`/v1/review/${item.id}/example`, { method: 'POST' });
  $('review-message').textContent = made.ok
    ? `Kept as an example of ${made.json.schema.name} (version ${made.json.schema.version}).`
    : (made.json?.error?.message ?? `the service answered ${made.status}`);
  if (made.ok) $('review-example').hidden = true;
}
