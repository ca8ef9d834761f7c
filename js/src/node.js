// Node entry: the component runs in worker threads owned by the package (`{ workers: N }`,
// default 1), so every call returns a Promise while the embedder's event loop goes on serving.
// Calls are spread over the workers, each running its calls one at a time in the order they
// came; a worker that dies rejects its calls with a `worker-exited` StructureError and is
// replaced for the next call. The key-value store stays on this thread (the worker's reads and
// writes cross over), so it outlives any worker. `close()` ends the workers.
import { MessageChannel, Worker } from 'node:worker_threads';
import { memoryKeyValue } from './key-value.js';
import { checkKeyValue, checkScope, structureEach, structureError, synchronous, toolArguments } from './structure.js';

export { localStorageKeyValue, memoryKeyValue } from './key-value.js';
export { StructureError } from './structure.js';

const DEFAULT_SCOPE = Object.freeze({ tenant: 'default' });
/** The most workers one client may own. */
const MAX_WORKERS = 16;
/** For tests: the pool behind a client. */
const POOL = Symbol.for('structure-tool.pool');

export async function createStructure(options = {}) {
  const { config = {}, keyValue = memoryKeyValue(), scope = DEFAULT_SCOPE, workers = 1 } = options;
  if (!Number.isInteger(workers) || workers < 1 || workers > MAX_WORKERS) {
    throw new TypeError(`workers must be an integer from 1 to ${MAX_WORKERS}`);
  }
  if (typeof config !== 'object' || config === null) {
    throw new TypeError('config must be an object of setting names to values');
  }
  checkKeyValue(keyValue);
  const pool = new Pool(workers, config, keyValue);
  await pool.start();
  return new NodeStructure(pool, checkScope(scope));
}

class NodeStructure {
  #pool;
  #scope;

  constructor(pool, scope) {
    this.#pool = pool;
    this.#scope = scope;
  }

  get scope() {
    return this.#scope;
  }

  get [POOL]() {
    return this.#pool;
  }

  /** The same client seen from another tenant or project. */
  withScope(scope) {
    return new NodeStructure(this.#pool, checkScope(scope));
  }

  async structure(request) {
    // A Blob does not cross to the worker: the document goes as base64 arguments.
    return this.#pool.call('structure', [await toolArguments(request)], this.#scope);
  }

  /** Each of `items` structured, `jobs` at a time, as each call ends (see `structureEach`). */
  structureEach(items, options) {
    return structureEach(this, items, options);
  }

  toolDefinition() {
    return this.#pool.call('toolDefinition', [], this.#scope);
  }

  listSchemas() {
    return this.#pool.call('listSchemas', [], this.#scope);
  }

  getSchema(name) {
    return this.#pool.call('getSchema', [name], this.#scope);
  }

  registerSchema(registration) {
    return this.#pool.call('registerSchema', [registration], this.#scope);
  }

  registerSkill(skill) {
    return this.#pool.call('registerSkill', [skill], this.#scope);
  }

  deregisterSchema(name) {
    return this.#pool.call('deregisterSchema', [name], this.#scope);
  }

  getSettings() {
    return this.#pool.call('getSettings', [], this.#scope);
  }

  setSettings(overrides) {
    return this.#pool.call('setSettings', [overrides], this.#scope);
  }

  /** Ends the workers (calls still running are rejected); the process can then exit. */
  close() {
    return this.#pool.close();
  }
}

/**
 * The workers of one client, started on demand and replaced when one dies. Each call is given
 * to the worker with the fewest calls outstanding, chosen before any await so that calls made
 * together spread out.
 */
class Pool {
  /** Per worker: the promise of its Slot, or null when it is to be started. */
  #slots;
  /** Per worker: the calls given to it and not yet settled. */
  #load;
  #config;
  #keyValue;
  #closed = false;

  constructor(count, config, keyValue) {
    this.#slots = Array.from({ length: count }, () => null);
    this.#load = Array.from({ length: count }, () => 0);
    this.#config = config;
    this.#keyValue = keyValue;
  }

  /** Starts the first worker, so a configuration the component refuses fails here. */
  async start() {
    await this.#slot(0);
  }

  /** The live workers (for tests that need to kill one). */
  get workers() {
    return this.#slots.filter((slot) => slot?.started && !slot.started.dead).map((slot) => slot.started.worker);
  }

  async call(method, args, scope) {
    if (this.#closed) throw new Error('this structure client is closed');
    let best = 0;
    this.#load.forEach((load, index) => {
      if (load < this.#load[best]) best = index;
    });
    this.#load[best] += 1;
    try {
      const slot = await this.#slot(best);
      return await slot.call(method, args, scope);
    } finally {
      this.#load[best] -= 1;
    }
  }

  async close() {
    this.#closed = true;
    const starting = this.#slots.filter(Boolean);
    this.#slots = this.#slots.map(() => null);
    const slots = await Promise.allSettled(starting);
    const reason = new Error('this structure client was closed');
    await Promise.all(slots.filter((s) => s.status === 'fulfilled').map((s) => s.value.retire(reason)));
  }

  /** The worker at `index`, started when missing or dead; a failed start is retried next call. */
  #slot(index) {
    const current = this.#slots[index];
    if (current && !current.started?.dead) return current;
    const starting = Slot.start(this.#config, this.#keyValue).then(
      (slot) => {
        starting.started = slot;
        return slot;
      },
      (error) => {
        if (this.#slots[index] === starting) this.#slots[index] = null;
        throw error;
      },
    );
    this.#slots[index] = starting;
    return starting;
  }
}

/** One worker, the calls it has not answered yet, and its bridge to the key-value store. */
class Slot {
  pending = new Map();
  dead = false;
  #nextId = 0;

  constructor(worker, channel) {
    this.worker = worker;
    this.channel = channel;
  }

  static async start(config, keyValue) {
    const channel = new MessageChannel();
    const flag = new SharedArrayBuffer(4);
    const worker = new Worker(new URL('./node-worker.js', import.meta.url), {
      workerData: { config, kvPort: channel.port2, kvFlag: flag },
      transferList: [channel.port2],
    });
    const slot = new Slot(worker, channel);
    channel.port1.on('message', (request) => answerKeyValue(keyValue, request, channel.port1, flag));
    channel.port1.unref();
    await new Promise((resolve, reject) => {
      worker.once('message', (message) =>
        message.ready
          ? resolve()
          : reject(new Error(`the structure component did not start: ${message.error.message}`)),
      );
      worker.once('error', reject);
    });
    worker.on('message', (message) => slot.#settle(message));
    worker.on('error', (error) => slot.#died(`the worker failed: ${error?.message ?? error}`));
    worker.on('exit', (code) => slot.#died(`the worker exited (code ${code})`, code));
    worker.unref();
    return slot;
  }

  call(method, args, scope) {
    if (this.dead) return Promise.reject(workerExited('the worker had exited', {}));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, method, args, scope });
    });
  }

  #settle({ id, value, error }) {
    const call = this.pending.get(id);
    if (!call) return;
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker.unref();
    if (!error) return call.resolve(value);
    if (error.structure) return call.reject(structureError(error));
    const failure = new Error(error.message);
    failure.name = error.name;
    call.reject(failure);
  }

  #died(message, exitCode) {
    if (!this.dead) this.#end(workerExited(message, { exitCode }));
  }

  async retire(reason) {
    this.#end(reason);
    await this.worker.terminate();
  }

  /** Marks the worker dead, closes its key-value bridge and rejects its calls with `reason`. */
  #end(reason) {
    this.dead = true;
    this.channel.port1.close();
    for (const { reject } of this.pending.values()) reject(reason);
    this.pending.clear();
  }
}

/** The error of a call whose worker is gone. */
function workerExited(message, detail) {
  return structureError({ kind: 'worker-exited', detail, message, usage: undefined });
}

/**
 * Runs one key-value operation for a worker and wakes it with the answer. The worker waits
 * until the flag is set, so it is set whatever happens: a method that throws, one that returns
 * a Promise, a value that cannot be posted are each an error answer.
 */
function answerKeyValue(keyValue, { op, key, value }, port, flag) {
  const method = ['get', 'set', 'delete'].includes(op) ? op : 'keys';
  try {
    const result = synchronous(method, method === 'keys' ? keyValue.keys() : keyValue[method](key, value));
    port.postMessage({ value: method === 'keys' ? [...result] : (result ?? undefined) });
  } catch (error) {
    port.postMessage({ error: String(error?.message ?? error) });
  } finally {
    const shared = new Int32Array(flag);
    Atomics.store(shared, 0, 1);
    Atomics.notify(shared, 0);
  }
}
