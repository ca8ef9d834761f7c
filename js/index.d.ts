// Types of the structure-tool package (Node and browser entries share them).

/** Settings and secrets, by the component's config keys (`structure_model`, `openai_api_key`, ...). */
export type Config = Record<string, string | number | boolean | undefined | null>;

/** Who a call is for: registry entries, settings overrides and the builder cache are per scope. */
export interface Scope {
  tenant: string;
  project?: string;
}

/** A synchronous byte store; the component keeps its registry, settings and cache in it. */
export interface KeyValue {
  get(key: string): Uint8Array | undefined;
  set(key: string, value: Uint8Array): void;
  delete(key: string): void;
  /** Every key of the store (the registry lists its schemas by their keys). */
  keys(): Iterable<string>;
}

export interface CreateOptions {
  /** Settings and secrets; nothing is read from the environment. */
  config?: Config;
  /** Default: in memory (Node), localStorage (browser). */
  keyValue?: KeyValue;
  /** Default `{ tenant: 'default' }`. */
  scope?: Scope;
  /** Browser only: the URL of the folder holding `structure.core*.wasm` (default: the package's `dist/web/`). */
  wasmBase?: string | URL;
  /**
   * Node only: worker threads running the component (1 to 16, default 1). Calls never block the
   * event loop; concurrent calls are spread over the workers, each taking its calls in order.
   */
  workers?: number;
}

export type JsonSchema = Record<string, unknown>;
export type SchemaMode = 'json' | 'named' | 'text' | 'examples';

/**
 * A document the text is read from: a PDF (its text layer, page by page), a Word document
 * (.docx), a web page (its visible text), UTF-8 text, or an image (for a model that reads images), as bytes (the media type is the Blob's,
 * else the one a File's name or the bytes tell), or as the tool arguments carry it:
 * `{ data, mediaType?, name? }` with the bytes in base64.
 */
export type DocumentInput =
  | Uint8Array
  | ArrayBuffer
  | Blob
  | { data: string; mediaType?: DocumentMediaType; name?: string };

/** The media types a document may have. */
export type DocumentMediaType =
  | 'application/pdf'
  | 'text/plain'
  | 'text/html'
  | 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
  | 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
  | 'image/png'
  | 'image/jpeg'
  | 'image/webp';

interface RequestCommon {
  /** A JSON Schema (object), a registry name, a description in words, or example objects. */
  schema: JsonSchema | string | Record<string, unknown>[];
  /** How to read a string `schema`: `json` (default), `named`, `text`; `examples` for example objects. */
  schemaMode?: SchemaMode;
  /** Content-stage iterations, 1 to 10 (default 3). */
  maxLoops?: number;
  /** Per-call setting overrides: `model`, `escalate`, `minConfidence`, `maxLoops`, `extractive`, `grounding`, `review`, `delivery`, `tokenBudget`, `chunkTokens`, `contextTokens`, ... */
  settings?: Record<string, unknown>;
  /**
   * Records mode: `schema` describes ONE record and `data` is the array of every record the
   * text holds (a long text is read in chunks, their calls sent concurrently).
   */
  records?: boolean;
  /** Return the text that was read (`text`): what the sources' offsets count in. */
  returnText?: boolean;
}

/** The arguments of a structure call, as the tool definition describes them: a prompt, a document, or both. */
export type StructureRequest =
  | (RequestCommon & {
      /** The free text to structure (with a document: text that comes before it). */
      prompt: string;
      document?: DocumentInput;
    })
  | (RequestCommon & { prompt?: string; document: DocumentInput });

export interface Usage {
  llmCalls: number;
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens: number;
}

export interface BuilderTrace {
  model: string;
  cacheHit: boolean;
  usage: Usage;
  schema: JsonSchema | null;
}

/** The kind of constraint a violation breaks. */
export type ReasonCategory =
  | 'type'
  | 'required'
  | 'additional-property'
  | 'enum'
  | 'pattern'
  | 'format'
  | 'range'
  | 'length'
  | 'items'
  | 'properties'
  | 'combination'
  | 'unreadable'
  | 'ungrounded'
  | 'schema'
  | 'rule'
  | 'other';

export interface Trace {
  model: string;
  providerProfile: string;
  delivery: 'native' | 'tool' | 'prompt';
  /** What the schema holds that checks nothing: unknown keywords, formats no one checks (annotations). */
  warnings: string[];
  schemaTransforms: string[];
  repairs: string[];
  /** Each reason message fed back to the model, in order. */
  feedback: string[];
  /** Each violation those messages named: the iteration whose answer broke it, where, and what kind. */
  reasons: { iteration: number; pointer: string; category: ReasonCategory }[];
  retries: number;
  schemaBuilder?: BuilderTrace;
  /** The model's context window the requests were fitted to, and where its figure came from. */
  contextWindow?: { tokens: number; from: 'setting' | 'table' | 'server' | 'learned' | 'default' };
  /** Records mode and long texts: the chunks the text was read in, one conversation each. */
  chunks?: number;
  /** A long text read in parts: the chunk (from 0) each value of `data` came from, by JSON pointer. */
  chunkOf?: Record<string, number>;
  /** Escalation (`escalate`): each model tried, in order; the last one answered. */
  attempts?: { model: string; outcome: string; usage: Usage }[];
  /** `minConfidence`: the optional values dropped for a confidence below it, by JSON pointer. */
  lowConfidence?: string[];
  /** Values the answer needs that the model was unsure of and a second reading of the text gave again: kept, not
   * asked for (check them); pointers into `data` (or `partial`). */
  inDoubt?: string[];
  /** A long text: what a second look at each field left out for its confidence found, in the few passages of the
   * text about it. */
  secondLooks?: string[];
  /** How sure the model was of its answer's form (the tokens that write no value), where the provider gives
   * log-probabilities: `minConfidence` by default trusts the values' confidence only when this is 0.7 or more. */
  formConfidence?: number;
  /** What an `ok` answer was given without: each optional value that stayed invalid after every reason message, and
   * each part of a long text whose answer did, with why. */
  leftOut?: string[];
  /** A PDF document: each page's size as shown (its crop box, turned), in points, to scale `boxes` by. */
  pageSizes?: { page: number; width: number; height: number }[];
}

/**
 * Where a line of a value stands on a page of a PDF: points from the top-left corner of the page as
 * shown (its crop box, turned by its rotation), as pdfplumber and Docling give words; `page` from 1.
 */
export interface PageBox {
  page: number;
  x0: number;
  top: number;
  x1: number;
  bottom: number;
}

/** A result sent to review (`structure_review`): the queue item, and the values in doubt. */
export interface ReviewTicket {
  /** The item's id: `GET /v1/review/{id}`. */
  id: string;
  status: 'pending' | 'claimed' | 'reviewed';
  /** Each value in doubt: a JSON pointer into `data` (or `partial`; empty: the whole result), and why. */
  fields: { pointer: string; reason: string }[];
}

interface OutcomeCommon {
  /** `inline`, `registry:bundled`, `registry:tenant:<id>`, `registry:project:<id>` or `inferred`. */
  schemaOrigin: string;
  /** The text that was read (the prompt, then a document's extracted text), with `returnText`. */
  text?: string;
  iterations: number;
  usage: Usage;
  trace: Trace;
  /** Where the result waits for a person, when `structure_review` sent it there. */
  review?: ReviewTicket;
}

/**
 * Where one value of `data` (a string, a number, an array item) comes from. A supported value
 * has its span of the prompt: `start`/`end` in Unicode code points, `utf16Start`/`utf16End` in
 * JavaScript string indices (`prompt.slice(utf16Start, utf16End) === text`).
 */
export type Source =
  | {
      /** JSON pointer to the value in `data`. */
      pointer: string;
      start: number;
      end: number;
      text: string;
      utf16Start: number;
      utf16End: number;
      /** `exact`: the span equals the value; `normalized`: after folding case and whitespace, reading a number, a date or an enum value as written. */
      match: 'exact' | 'normalized';
      /** The page of a PDF document the span is on (from 1); absent in the prompt or a text. */
      page?: number;
      /** A PDF document: one box per line the span runs over; absent in the prompt or a text. */
      boxes?: PageBox[];
      /** A spreadsheet: the cell the span is in, as Excel names it (`Lines!B14`). */
      cell?: string;
      /** How sure the model was of the value (0–1), where the provider gives token log-probabilities. */
      confidence?: number;
    }
  | {
      pointer: string;
      /** No span of the prompt supports the value: the model worked it out. */
      match: 'derived';
      confidence?: number;
    };

/** Records mode: a record the text holds without a value its schema requires (not invented). */
export interface IncompleteRecord {
  /** The values the text gives for it. */
  record: Record<string, unknown>;
  /** What it lacks: `the text gives no value for /date`. */
  need: string;
  /** Pointers into `record`. */
  sources: Source[];
}

/**
 * Records mode's outcome: `data` is the array of records, each valid against the schema (source
 * pointers start with the record's index, `/3/name`), and `incomplete` lists the records that
 * lack a required value. `stale`: a chunk's answer stayed invalid (the errors name its characters).
 */
export type RecordsOutcome =
  | (OutcomeCommon & {
      status: 'ok';
      data: Record<string, unknown>[];
      sources: Source[];
      incomplete: IncompleteRecord[];
    })
  | (OutcomeCommon & { status: 'stale'; errors: string[] });

/**
 * `data` exists only when it validated against the full schema, with the `sources` of its values.
 * It is an object for an object root; for another root it is that root's value (an array of
 * records for an array of objects, else the string, number, boolean or array itself): name its
 * type, `structure.structure<number>({ … })`.
 */
export type Outcome<Data = Record<string, unknown>> =
  | (OutcomeCommon & { status: 'ok'; data: Data; sources: Source[] })
  | (OutcomeCommon & {
      status: 'need-more-input';
      need: string;
      /** What the text did give: the answer without the values `need` names (not valid against the schema). */
      partial?: Data extends Record<string, unknown> ? Partial<Data> : Data;
      /** Where each value of `partial` comes from. */
      sources?: Source[];
    })
  | (OutcomeCommon & { status: 'stale'; errors: string[] });

export type ErrorKind =
  | 'invalid-request'
  | 'schema-not-found'
  /** The schema cannot be used; `detail` is the JSON pointer into it where, when one place is at fault. */
  | 'invalid-schema'
  | 'configuration'
  | 'provider'
  | 'transport'
  | 'refusal'
  | 'blocked'
  | 'truncated'
  | 'invalid-response'
  | 'structured-output-failed'
  | 'budget-exhausted'
  | 'storage'
  | 'unsupported'
  /** A document cannot be read; `detail` says why: `too-large`, `too-many-pages`, `encrypted`, `no-text-layer`, `unreadable`, `not-utf8`. */
  | 'invalid-document'
  /** Node: the worker thread running the call died; the next call gets a fresh one. */
  | 'worker-exited';

/** A typed failure; `detail` is the kind's payload (a field name, a config key, the provider's status, ...). */
export class StructureError extends Error {
  readonly name: 'StructureError';
  readonly kind: ErrorKind;
  readonly detail:
    | string
    | { name: string; suggestions: string[] }
    | { status: number; retryable: boolean; code?: string }
    | { exitCode?: number }
    | undefined;
  /** Tokens already spent when the error happened. */
  readonly usage: Usage;
}

export interface SchemaInfo {
  name: string;
  title?: string;
  description?: string;
  version: string;
  /** `bundled`, `tenant:<id>` or `project:<id>`. */
  origin: string;
  hasManual: boolean;
}

export interface RegisteredSchema {
  info: SchemaInfo;
  schema: JsonSchema;
  manual?: string;
}

export interface Registration {
  name: string;
  schema: JsonSchema | string;
  manual?: string;
  /** `MAJOR.MINOR`, default `1.0`. */
  version?: string;
}

export interface Skill {
  skillMd: string;
  /** The folder's other files, by relative path. */
  files?: Record<string, string>;
}

export interface Settings {
  effective: Record<string, unknown>;
  overrides: Record<string, unknown>;
}

/**
 * The component, ready to call: every method returns a Promise. In browsers one instance runs
 * the calls one at a time; in Node, worker threads run them off the event loop.
 */
/** One item of `structureEach`: a request and the id its result comes back with. */
export type BatchItem = StructureRequest & { id: string | number };

/** What one item came to: its outcome, or its error (a StructureError's fields). */
export type BatchResult =
  | { id: string | number; outcome: Outcome | RecordsOutcome }
  | {
      id: string | number;
      error: { kind: ErrorKind | 'host'; detail?: StructureError['detail']; message: string; usage?: Usage };
    };

export interface Structure {
  readonly scope: Readonly<Scope>;
  /** The same instance seen from another tenant or project. */
  withScope(scope: Scope): Structure;
  structure(request: StructureRequest & { records: true }): Promise<RecordsOutcome>;
  structure<Data = Record<string, unknown>>(
    request: StructureRequest & { records?: false },
  ): Promise<Outcome<Data>>;
  /**
   * Each item structured, `jobs` calls at a time (default 4), yielded as its call ends: many texts
   * from one loop, the items read as slots free.
   */
  structureEach(
    items: Iterable<BatchItem> | AsyncIterable<BatchItem>,
    options?: { jobs?: number },
  ): AsyncGenerator<BatchResult, void, undefined>;
  /** The tool definition (name, description, parameters, returns) to register with an agent framework. */
  toolDefinition(): Promise<Record<string, unknown>>;
  listSchemas(): Promise<SchemaInfo[]>;
  getSchema(name: string): Promise<RegisteredSchema>;
  registerSchema(registration: Registration): Promise<SchemaInfo>;
  registerSkill(skill: Skill): Promise<SchemaInfo>;
  deregisterSchema(name: string): Promise<boolean>;
  getSettings(): Promise<Settings>;
  setSettings(overrides: Record<string, unknown>): Promise<void>;
  /** Node: ends the worker threads (calls in flight are rejected), so the process can exit. */
  close(): Promise<void>;
}

export function createStructure(options?: CreateOptions): Promise<Structure>;

/** A store in a Map (the Node default); pass your own Map to see or seed the entries. */
export function memoryKeyValue(map?: Map<string, Uint8Array>): KeyValue;

/** A store in localStorage under `prefix` (the browser default). */
export function localStorageKeyValue(options?: {
  prefix?: string;
  storage?: { getItem(key: string): string | null; setItem(key: string, value: string): void; removeItem(key: string): void };
}): KeyValue;
