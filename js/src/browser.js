// Browser entry: the component transpiled by jco with JSPI (`dist/web`), so a call suspends while
// `fetch` waits for the model and the page stays responsive.
import { instantiate } from '../dist/web/structure.js';
import { localStorageKeyValue, memoryKeyValue } from './key-value.js';
import { compileOnce, createStructureWith } from './structure.js';

export { localStorageKeyValue, memoryKeyValue } from './key-value.js';
export { StructureError } from './structure.js';

const loaders = new Map();

export function createStructure(options = {}) {
  if (typeof WebAssembly.Suspending !== 'function') {
    const lacking = 'structure needs WebAssembly JSPI (JavaScript Promise Integration), which this browser lacks';
    return Promise.reject(new Error(`${lacking}: use Chromium 137 or later`));
  }
  // After bundling, import.meta.url is the bundle's address: a page then says where the
  // structure.core*.wasm files are served with `wasmBase`.
  const base = options.wasmBase
    ? new URL(options.wasmBase, document.baseURI).href
    : new URL('../dist/web/', import.meta.url).href;
  if (!loaders.has(base)) {
    loaders.set(
      base,
      compileOnce((name) => compileFrom(new URL(name, base))),
    );
  }
  return createStructureWith(instantiate, loaders.get(base), {
    ...options,
    keyValue: options.keyValue ?? (globalThis.localStorage ? localStorageKeyValue() : memoryKeyValue()),
  });
}

async function compileFrom(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot load ${url}: HTTP ${response.status}`);
  // compileStreaming insists on the application/wasm type, which not every dev server sends.
  return response.headers.get('content-type')?.startsWith('application/wasm')
    ? WebAssembly.compileStreaming(response)
    : WebAssembly.compile(await response.arrayBuffer());
}
