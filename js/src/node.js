// Node entry: the component transpiled by jco for Node (`dist/node`). Calls run on the caller's
// thread; preview2-shim makes each LLM request synchronously, so a call blocks the event loop
// until the model answers (run it in a worker thread to keep a server responsive).
import { readFile } from 'node:fs/promises';
import { instantiate } from '../dist/node/structure.js';
import { memoryKeyValue } from './key-value.js';
import { compileOnce, createStructureWith } from './structure.js';

export { StructureError } from './structure.js';
export { localStorageKeyValue, memoryKeyValue } from './key-value.js';

const loadCoreModule = compileOnce(async (name) =>
  WebAssembly.compile(await readFile(new URL(`../dist/node/${name}`, import.meta.url))),
);

export function createStructure(options = {}) {
  return createStructureWith(instantiate, loadCoreModule, {
    ...options,
    keyValue: options.keyValue ?? memoryKeyValue(),
  });
}
