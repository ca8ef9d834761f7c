// The worker thread a Node client runs the component in (see node.js): it instantiates the
// component once, then serves one request message after another. A call blocks this thread
// while the model answers, never the embedder's event loop. The key-value store stays on the
// embedder's thread: each of its calls crosses over synchronously (a message, then a wait on a
// shared flag until the answer is posted back).
import { readFile } from 'node:fs/promises';
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { instantiate } from '../dist/node/structure.js';
import { compileOnce, createStructureWith, StructureError } from './structure.js';

const { config, kvPort, kvFlag } = workerData;
const flag = new Int32Array(kvFlag);

/** One key-value operation on the embedder's thread, waited for here. */
function keyValueCall(op, key, value) {
  Atomics.store(flag, 0, 0);
  kvPort.postMessage({ op, key, value });
  Atomics.wait(flag, 0, 0);
  const answer = receiveMessageOnPort(kvPort)?.message;
  if (!answer) throw new Error('the key-value store on the main thread did not answer');
  if ('error' in answer) throw new Error(answer.error);
  return answer.value;
}

const keyValue = {
  get: (key) => keyValueCall('get', key),
  set: (key, value) => keyValueCall('set', key, value),
  delete: (key) => keyValueCall('delete', key),
  keys: () => keyValueCall('keys'),
};

const loadCoreModule = compileOnce(async (name) =>
  WebAssembly.compile(await readFile(new URL(`../dist/node/${name}`, import.meta.url))),
);

let structure;
try {
  structure = await createStructureWith(instantiate, loadCoreModule, { config, keyValue });
  parentPort.postMessage({ ready: true });
} catch (error) {
  parentPort.postMessage({ ready: false, error: { message: String(error?.message ?? error) } });
}

parentPort.on('message', async ({ id, method, args, scope }) => {
  try {
    const value = await structure.withScope(scope)[method](...args);
    parentPort.postMessage({ id, value });
  } catch (error) {
    parentPort.postMessage({ id, error: serialised(error) });
  }
});

function serialised(error) {
  if (error instanceof StructureError) {
    return { structure: true, kind: error.kind, detail: error.detail, message: error.message, usage: error.usage };
  }
  return { name: error?.name ?? 'Error', message: String(error?.message ?? error) };
}
