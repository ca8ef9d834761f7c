// The workspace's mock LLM server (`mock-llm`, built by cargo) in a child process, scripted over
// its /_mock control API. It must run outside this process: in Node a structure call blocks the
// event loop until the LLM answers.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const workspace = new URL('../..', import.meta.url).pathname;

export async function startMockLlm() {
  execFileSync('cargo', ['build', '--quiet', '--package', 'mock-llm', '--bin', 'mock-llm'], {
    cwd: workspace,
    stdio: 'inherit',
  });
  const targetDir = process.env.CARGO_TARGET_DIR ?? join(workspace, 'target');
  const child = spawn(join(targetDir, 'debug', 'mock-llm'), ['--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = await Promise.race([
    once(createInterface({ input: child.stdout }), 'line'),
    once(child, 'exit').then(([code]) => Promise.reject(new Error(`mock-llm exited with ${code}`))),
  ]);
  const baseUrl = line.match(/listening on (\S+)/)?.[1];
  if (!baseUrl) throw new Error(`mock-llm said ${JSON.stringify(line)}`);
  const control = (path, init) => fetch(new URL(`/_mock/${path}`, baseUrl), init).then((response) => response.json());
  return {
    baseUrl,
    reset: () => control('reset', { method: 'POST' }),
    /** Queues one reply: { status, body (text), headers?, delayMs? }. */
    reply: (reply) => control('replies', { method: 'POST', body: JSON.stringify({ headers: [], ...reply }) }),
    /** Makes the mock a model that reads a contract's terms (`mock_llm::document`). */
    readDocuments: (latencyMs = 0) => control('document', { method: 'POST', body: JSON.stringify({ latencyMs }) }),
    /** A contract of at least `chars` characters with its terms planted, and its schema. */
    document: (chars) => control('document/text', { method: 'POST', body: JSON.stringify({ chars }) }),
    /** A PDF whose pages hold `pages` (text), as bytes. */
    pdf: async (pages) =>
      new Uint8Array(
        await (
          await fetch(new URL('/_mock/pdf', baseUrl), { method: 'POST', body: JSON.stringify({ pages }) })
        ).arrayBuffer(),
      ),
    /** A Word document whose paragraphs hold `paragraphs` (text), as bytes. */
    docx: async (paragraphs) =>
      new Uint8Array(
        await (
          await fetch(new URL('/_mock/docx', baseUrl), { method: 'POST', body: JSON.stringify({ pages: paragraphs }) })
        ).arrayBuffer(),
      ),
    /** A spreadsheet of one sheet whose rows are `rows` (arrays of cells), as bytes. */
    xlsx: async (rows) =>
      new Uint8Array(
        await (
          await fetch(new URL('/_mock/xlsx', baseUrl), {
            method: 'POST',
            body: JSON.stringify({ pages: [rows.map((row) => row.join('\t')).join('\n')] }),
          })
        ).arrayBuffer(),
      ),
    /**
     * Makes the mock stand for a server kind: `{ kind: 'openai', contextLimit: 2048 }`,
     * `{ kind: 'llamacpp', nCtx: 4096 }`.
     */
    serveAs: (server) => control('server', { method: 'POST', body: JSON.stringify(server) }),
    /** The requests the mock received, bodies parsed. */
    requests: async () => (await control('requests')).map((recorded) => ({ ...recorded, json: parse(recorded.body) })),
    stop: () => child.kill(),
  };
}

/** An OpenAI chat completion whose message content is `content` (text). */
export function completion(content) {
  return {
    status: 200,
    headers: [['content-type', 'application/json']],
    body: JSON.stringify({
      id: 'chatcmpl-mock',
      object: 'chat.completion',
      created: 1767225600,
      model: 'mock',
      choices: [
        { index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' },
      ],
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
    }),
  };
}

/** The component's answer envelope: `{"answer": value}`. */
export const answer = (value) => completion(JSON.stringify({ answer: value }));

/** The need path: the model says what the text lacks. */
export const need = (what) => answer({ _need: what });

/** An error in OpenAI's envelope. */
export function providerError(status, code, message) {
  return {
    status,
    headers: [['content-type', 'application/json']],
    body: JSON.stringify({ error: { message, type: code, param: null, code } }),
  };
}

function parse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
