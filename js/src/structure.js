// The JavaScript face of the structure component, shared by the Node and browser entries: it
// supplies the imports the component needs (WASI from preview2-shim, plus our `wasi:config/store`
// and `wasi:keyvalue/store` with its `atomics`), runs one call at a time and turns WIT values into
// plain JSON.
import { WASIShim } from '@bytecodealliance/preview2-shim/instantiation';

/** A typed failure of a call: `kind` is the WIT error-kind tag, `detail` its payload. */
export class StructureError extends Error {
  constructor({ kind, message, usage }) {
    super(message);
    this.name = 'StructureError';
    this.kind = kind.tag;
    this.detail = kind.val;
    this.usage = plainUsage(usage);
  }
}

/**
 * `request` as tool arguments: a `document` given as bytes (`Uint8Array`, `ArrayBuffer`, `Blob`)
 * becomes `{ data, mediaType?, name? }` with the bytes in base64: a Blob's media type when it has
 * one the component reads and a File's name; the component tells the rest from the name's
 * extension or the bytes (`media_type::of`, one rule for every surface).
 */
export async function toolArguments(request) {
  const document = request?.document;
  if (document === undefined || document === null || !isBytes(document)) return request;
  const bytes =
    typeof Blob !== 'undefined' && document instanceof Blob
      ? new Uint8Array(await document.arrayBuffer())
      : new Uint8Array(
          document instanceof ArrayBuffer
            ? document
            : document.buffer.slice(document.byteOffset, document.byteOffset + document.byteLength),
        );
  const argument = { data: base64(bytes) };
  if (typeof Blob !== 'undefined' && document instanceof Blob) {
    const declared = document.type.split(';')[0].trim();
    if (READ_MEDIA_TYPES.includes(declared)) argument.mediaType = declared;
    if (typeof document.name === 'string' && document.name) argument.name = document.name;
  }
  return { ...request, document: argument };
}

/** The media types the component reads (its `MediaType::ALL`). */
const READ_MEDIA_TYPES = [
  'application/pdf',
  'text/plain',
  'text/html',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'image/png',
  'image/jpeg',
  'image/webp',
];

function isBytes(value) {
  return (
    value instanceof Uint8Array ||
    value instanceof ArrayBuffer ||
    (typeof Blob !== 'undefined' && value instanceof Blob)
  );
}

function base64(bytes) {
  if (typeof Buffer !== 'undefined') return Buffer.from(bytes).toString('base64');
  let binary = '';
  for (let at = 0; at < bytes.length; at += 0x8000) {
    binary += String.fromCharCode.apply(null, bytes.subarray(at, at + 0x8000));
  }
  return btoa(binary);
}

/** A StructureError from its parts, as they cross between threads. */
/**
 * Structures each of `items` (an iterable or async iterable of tool-call arguments, each with
 * an `id`), `jobs` calls at a time, yielding `{ id, outcome }` or `{ id, error }` (the
 * StructureError's kind, message, usage, ...) as each call ends. Items are read as slots free,
 * so a long iterable is never held whole.
 */
export async function* structureEach(client, items, { jobs = 4 } = {}) {
  if (!Number.isInteger(jobs) || jobs < 1) {
    throw new TypeError('jobs must be a positive integer');
  }
  const iterator = (items[Symbol.asyncIterator] ?? items[Symbol.iterator]).call(items);
  const running = new Map();
  let next = 0;
  let exhausted = false;
  const start = async () => {
    const step = await iterator.next();
    if (step.done) {
      exhausted = true;
      return;
    }
    const key = next++;
    const { id, ...request } = step.value ?? {};
    const call = client
      .structure(request)
      .then((outcome) => ({ id, outcome }))
      .catch((error) => ({
        id,
        error:
          error instanceof StructureError
            ? plainError(error)
            : { kind: 'host', message: String(error?.message ?? error) },
      }))
      .then((done) => ({ key, done }));
    running.set(key, call);
  };
  while (true) {
    while (!exhausted && running.size < jobs) {
      await start();
    }
    if (running.size === 0) {
      return;
    }
    const { key, done } = await Promise.race(running.values());
    running.delete(key);
    yield done;
  }
}

/** A StructureError as the tool form's error object. */
function plainError(error) {
  const { kind, detail, message, usage } = error;
  return detail === undefined ? { kind, message, usage } : { kind, detail, message, usage };
}

export function structureError({ kind, detail, message, usage }) {
  return new StructureError({ kind: { tag: kind, val: detail }, message, usage });
}

const DEFAULT_SCOPE = Object.freeze({ tenant: 'default' });

/**
 * Instantiates the component with `instantiate` (a jco `--instantiation async` build) and wraps it.
 * `loadCoreModule(name)` returns a Promise of the compiled `WebAssembly.Module` named `name`.
 */
export async function createStructureWith(instantiate, loadCoreModule, options) {
  const { config = {}, keyValue, scope = DEFAULT_SCOPE } = options;
  const imports = {
    // No environment, arguments or files for the guest: its settings come only from `config`.
    ...new WASIShim({ sandbox: { env: {}, args: ['structure'] } }).getImportObject(),
    'wasi:config/store': configStore(config),
    ...keyValueImports(keyValue),
  };
  const { structuring } = await instantiate(loadCoreModule, imports);
  return new Structure(structuring, { tail: Promise.resolve() }, checkScope(scope));
}

/** Compiles each core module once per `load`, so later instances only instantiate. */
export function compileOnce(load) {
  const modules = new Map();
  return (name) => {
    if (!modules.has(name)) modules.set(name, load(name));
    return modules.get(name);
  };
}

class Structure {
  #exports;
  #queue;
  #scope;

  constructor(exports, queue, scope) {
    this.#exports = exports;
    this.#queue = queue;
    this.#scope = scope;
  }

  get scope() {
    return this.#scope;
  }

  /** The same instance seen from another tenant or project. */
  withScope(scope) {
    return new Structure(this.#exports, this.#queue, checkScope(scope));
  }

  /**
   * Structures `request.prompt` (and `request.document`); `request` is the tool-call arguments
   * object, its `document` also a `Uint8Array`, an `ArrayBuffer` or a `Blob`.
   */
  async structure(request) {
    const args = await toolArguments(request);
    // In the browser build this export returns a Promise (JSPI); in Node, the JSON itself.
    return this.#call(async (api, scope) => JSON.parse(await api.callTool(scope, JSON.stringify(args))));
  }

  /** Each of `items` structured, `jobs` at a time, as each call ends (see `structureEach`). */
  structureEach(items, options) {
    return structureEach(this, items, options);
  }

  toolDefinition() {
    return this.#call((api) => JSON.parse(api.toolDefinition()));
  }

  listSchemas() {
    return this.#call((api, scope) => api.listSchemas(scope).map(plainInfo));
  }

  getSchema(name) {
    return this.#call((api, scope) => {
      const found = api.getSchema(scope, name);
      return { info: plainInfo(found.info), schema: JSON.parse(found.schema), manual: found.manual };
    });
  }

  registerSchema({ name, schema, manual, version }) {
    return this.#call((api, scope) =>
      plainInfo(api.registerSchema(scope, { name, schema: jsonText(schema), manual, version })),
    );
  }

  /** `files` maps each path in the skill folder, other than SKILL.md, to its text. */
  registerSkill({ skillMd, files = {} }) {
    return this.#call((api, scope) => plainInfo(api.registerSkill(scope, { skillMd, files: Object.entries(files) })));
  }

  deregisterSchema(name) {
    return this.#call((api, scope) => api.deregisterSchema(scope, name));
  }

  getSettings() {
    return this.#call((api, scope) => JSON.parse(api.getSettings(scope)));
  }

  setSettings(overrides) {
    return this.#call((api, scope) => api.setSettings(scope, jsonText(overrides)));
  }

  /** Nothing to end for an instance on this thread (the Node client's workers end here). */
  close() {
    return Promise.resolve();
  }

  // One call at a time: a browser call suspends at each HTTP wait, and the component must not be
  // entered again before it resumes.
  #call(body) {
    const run = this.#queue.tail.then(async () => {
      try {
        return await body(this.#exports, this.#scope);
      } catch (error) {
        throw fromComponent(error);
      }
    });
    this.#queue.tail = run.catch(() => {});
    return run;
  }
}

export function checkScope(scope) {
  if (typeof scope !== 'object' || scope === null || typeof scope.tenant !== 'string') {
    throw new TypeError('scope must be { tenant: string, project?: string }');
  }
  if (scope.project !== undefined && typeof scope.project !== 'string') {
    throw new TypeError('scope.project must be a string when given');
  }
  return Object.freeze({ tenant: scope.tenant, project: scope.project });
}

function jsonText(value) {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function fromComponent(error) {
  const payload = error?.payload;
  return payload?.kind && typeof payload.message === 'string' ? new StructureError(payload) : error;
}

// WIT u64 arrives as BigInt, which JSON cannot carry; token counts fit a Number.
function plainUsage(usage) {
  return usage && Object.fromEntries(Object.entries(usage).map(([key, value]) => [key, Number(value)]));
}

function plainInfo({ name, title, description, version, origin, hasManual }) {
  return { name, title, description, version, origin, hasManual };
}

// wasi:config/store: the embedder's settings and secrets (`structure_model`, `openai_api_key`, ...).
function configStore(config) {
  if (typeof config !== 'object' || config === null) {
    throw new TypeError('config must be an object of setting names to values');
  }
  const values = new Map();
  for (const [key, value] of Object.entries(config)) {
    if (value === undefined || value === null) continue;
    if (!['string', 'number', 'boolean'].includes(typeof value)) {
      throw new TypeError(`config.${key} must be a string, number or boolean`);
    }
    values.set(key, String(value));
  }
  return {
    get: (key) => values.get(key),
    getAll: () => [...values.entries()],
  };
}

// wasi:keyvalue/store over a synchronous backend. The component opens the store `default`. A
// failing backend is reported to the component as the WIT error value (a thrown `Error` would
// unwind through it instead).
export function checkKeyValue(backend) {
  for (const method of ['get', 'set', 'delete', 'keys']) {
    if (typeof backend?.[method] !== 'function') {
      throw new TypeError(`keyValue must have get, set, delete and keys methods (missing ${method})`);
    }
  }
}

/**
 * What a key-value method returned, refused when it is a Promise: the component reads its
 * store synchronously (a call runs to its end without yielding), so an async backend cannot
 * answer in time. The refusal is the call's storage error, never an unhandled rejection.
 */
export function synchronous(method, result) {
  if (typeof result?.then === 'function') {
    result.then(undefined, () => {}); // Its outcome is not waited for: keep it from going unhandled.
    throw new TypeError(
      `keyValue.${method}() returned a Promise; the key-value methods must answer synchronously ` +
        '(keep an in-memory copy, or use a synchronous client)',
    );
  }
  return result;
}

export function keyValueImports(backend) {
  checkKeyValue(backend);
  const guarded = (method, ...args) => {
    try {
      return synchronous(method, backend[method](...args));
    } catch (error) {
      throw { tag: 'other', val: String(error?.message ?? error) };
    }
  };
  const read = (key) => guarded('get', key) ?? undefined;
  class Bucket {
    get(key) {
      return read(key);
    }
    set(key, value) {
      guarded('set', key, value);
    }
    delete(key) {
      guarded('delete', key);
    }
    exists(key) {
      return read(key) !== undefined;
    }
    // Every key in one page: the registry lists its schemas by their keys.
    listKeys() {
      const keys = guarded('keys');
      try {
        return { keys: [...keys], cursor: undefined };
      } catch (error) {
        throw { tag: 'other', val: String(error?.message ?? error) };
      }
    }
  }
  const bucket = new Bucket();
  // wasi:keyvalue/atomics: a compare-and-swap remembers the value it saw and writes only if the
  // backend still holds it. A call runs to its end in this thread, so no other write of this
  // instance comes between the check and the write. (Node's workers each run an instance of
  // their own over one backend: between two workers a swap is not one step. Its one user, the
  // insights of the HTTP API, is not served under jco.)
  const same = (a, b) =>
    a === undefined || b === undefined ? a === b : a.length === b.length && a.every((byte, i) => byte === b[i]);
  class Cas {
    constructor(key, seen) {
      this.key = key;
      this.seen = seen;
    }
    static new(_bucket, key) {
      return new Cas(key, read(key));
    }
    current() {
      return this.seen;
    }
  }
  return {
    'wasi:keyvalue/store': {
      // jco checks that every bucket handed to the component is an instance of this class.
      Bucket,
      open(name) {
        if (name !== 'default') throw { tag: 'no-such-store' };
        return bucket;
      },
    },
    'wasi:keyvalue/atomics': {
      Cas,
      swap(cas, value) {
        const now = read(cas.key);
        if (!same(now, cas.seen)) throw { tag: 'cas-failed', val: new Cas(cas.key, now) };
        guarded('set', cas.key, value);
      },
      increment(_bucket, key, delta) {
        const seen = read(key);
        let now;
        try {
          now = seen === undefined ? 0n : BigInt(new TextDecoder().decode(seen).trim());
        } catch {
          throw { tag: 'other', val: `the value at ${JSON.stringify(key)} is not a whole number` };
        }
        const next = now + BigInt(delta);
        guarded('set', key, new TextEncoder().encode(next.toString()));
        return next;
      },
    },
  };
}
