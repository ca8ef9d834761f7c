// The playground's page view: a PDF's pages, drawn by pdf.js, with each value's boxes over them.
// The console imports this module, and it pdf.js (vendored in console/vendor/, served gzipped by
// the component), only when it shows a PDF's result: the first load carries neither. Boxes are
// placed in percent of their page, so they stay on their words at any size; each page's canvas
// is drawn when it comes near the view. The pure parts (which boxes, where) are tested in Node.

/** Each page's boxes, from the sources' `boxes`: one box per place, naming every value drawn there. */
export function pageBoxes(sources) {
  const pages = new Map();
  for (const source of sources) {
    for (const box of source.boxes ?? []) {
      if (!pages.has(box.page)) pages.set(box.page, new Map());
      const onPage = pages.get(box.page);
      const place = [box.x0, box.top, box.x1, box.bottom].join(' ');
      if (!onPage.has(place)) onPage.set(place, { ...box, pointers: [], matches: [] });
      const drawn = onPage.get(place);
      drawn.pointers.push(source.pointer);
      drawn.matches.push(source.match);
    }
  }
  return new Map([...pages].map(([page, boxes]) => [page, [...boxes.values()]]));
}

/**
 * Where `box` (PDF points from the top-left corner of the page's visible area) stands on a page
 * of `size` points, in percent of the page: `{left, top, width, height}`, cut to the page.
 */
export function boxPlace(box, size) {
  const clamp = (value, whole) => Math.min(Math.max(value, 0), whole);
  const [x0, x1] = [clamp(box.x0, size.width), clamp(box.x1, size.width)];
  const [top, bottom] = [clamp(box.top, size.height), clamp(box.bottom, size.height)];
  const percent = (value, whole) => Math.round((10000 * value) / whole) / 100;
  return {
    left: percent(x0, size.width),
    top: percent(top, size.height),
    width: percent(Math.max(x1 - x0, 0), size.width),
    height: percent(Math.max(bottom - top, 0), size.height),
  };
}

let pdfjs = null;
/** What the view shows: the document's loading task, the watch on its pages, and when the one before was let go. */
let shown = { task: null, observer: null, released: Promise.resolve() };

/** pdf.js, imported once, with one worker for every document (the policy allows workers from 'self'). */
async function renderer() {
  if (!pdfjs) {
    const module = await import('./pdf.min.mjs');
    const worker = new Worker(new URL('./pdf.worker.min.mjs', import.meta.url), { type: 'module' });
    module.GlobalWorkerOptions.workerPort = worker;
    pdfjs = module;
  }
  return pdfjs;
}

/** An element with properties and a class. */
function node(tag, className, props = {}) {
  return Object.assign(document.createElement(tag), { className, ...props });
}

/**
 * Shows the PDF `bytes` in `view` (what it holds stays until the pages replace it), a page under
 * another with the boxes of `sources` on them; `sizes` is the result's `trace.pageSizes`, the
 * frame the boxes are measured in (pdf.js's own sizes when absent). `link(element, pointers)`
 * makes a box light its values, as the text view's marks do. Resolves once every page and box is
 * placed (false when a later call took the view over); with `bytes` null, clears the view and
 * lets the last document go. A canvas gets `data-drawn` once painted.
 */
export async function showPages(view, bytes, sources, sizes, link) {
  const previous = shown;
  // The worker takes the next document only once it has let go of the last one.
  const released = previous.released.then(() => previous.task?.destroy()).catch(() => {});
  const mine = { task: null, observer: null, released };
  shown = mine;
  previous.observer?.disconnect();
  if (!bytes) view.replaceChildren();
  await released;
  if (!bytes || shown !== mine) return false;
  const { getDocument } = await renderer();
  if (shown !== mine) return false;
  // A copy: pdf.js hands its buffer to the worker. No eval and no WebAssembly, which the policy
  // does not allow: JBIG2 and fax images are decoded in JavaScript, JPEG 2000 ones left blank.
  mine.task = getDocument({ data: bytes.slice(), isEvalSupported: false, useWasm: false, verbosity: 0 });
  let pdf;
  try {
    pdf = await mine.task.promise;
  } catch (error) {
    if (shown !== mine) return false;
    throw error;
  }
  if (shown !== mine) return false;
  const measured = new Map((sizes ?? []).map((size) => [size.page, size]));
  const boxes = pageBoxes(sources);
  const pages = [];
  for (let number = 1; number <= pdf.numPages; number++) {
    const size = measured.get(number) ?? (await ownSize(pdf, number));
    if (shown !== mine) return false;
    pages.push(layPage(number, pdf.numPages, size, boxes.get(number) ?? [], link));
  }
  view.replaceChildren(...pages.map((page) => page.figure));
  mine.observer = new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        mine.observer.unobserve(entry.target);
        const page = pages.find((each) => each.sheet === entry.target);
        draw(pdf, page.number, page.canvas, () => shown === mine).catch((error) => {
          if (shown === mine) page.canvas.dataset.drawn = `failed: ${error.message}`;
        });
      }
    },
    { root: view, rootMargin: '50% 0px' },
  );
  for (const page of pages) mine.observer.observe(page.sheet);
  return true;
}

/** A page's visible size in points, rotation applied, as pdf.js reads it. */
async function ownSize(pdf, number) {
  const { width, height } = (await pdf.getPage(number)).getViewport({ scale: 1 });
  return { page: number, width, height };
}

/** One page's sheet (its canvas, drawn later, and its boxes) and caption. */
function layPage(number, count, size, boxes, link) {
  const sheet = node('div', 'sheet');
  sheet.style.aspectRatio = `${size.width} / ${size.height}`;
  sheet.dataset.page = String(number);
  const canvas = node('canvas', '');
  sheet.append(canvas);
  for (const box of boxes) {
    const kind = box.matches.includes('exact') ? 'exact' : 'normalized';
    const mark = node('div', `box m-${kind}`, {
      tabIndex: -1,
      title: box.pointers.map((pointer, i) => `${pointer} (${box.matches[i]})`).join(', '),
    });
    const place = boxPlace(box, size);
    for (const side of ['left', 'top', 'width', 'height']) mark.style[side] = `${place[side]}%`;
    mark.dataset.pointers = JSON.stringify(box.pointers);
    link(mark, box.pointers);
    sheet.append(mark);
  }
  const figure = node('figure', 'page');
  figure.append(node('figcaption', '', { textContent: `page ${number} of ${count}` }), sheet);
  return { number, figure, sheet, canvas };
}

/** Paints page `number` into `canvas` at its shown size and the screen's pixel density. */
async function draw(pdf, number, canvas, current) {
  const page = await pdf.getPage(number);
  if (!current()) return;
  const pixels = canvas.parentElement.clientWidth * (window.devicePixelRatio || 1);
  const viewport = page.getViewport({ scale: pixels / page.getViewport({ scale: 1 }).width });
  canvas.width = Math.round(viewport.width);
  canvas.height = Math.round(viewport.height);
  await page.render({ canvas, canvasContext: canvas.getContext('2d'), viewport }).promise;
  if (current()) canvas.dataset.drawn = 'true';
}
