// The official MCP TypeScript SDKs as real clients of `structure serve`: the single-package line
// (`@modelcontextprotocol/sdk` 1.x, Ajv draft-07, which checks `structuredContent` even on an
// error result) and the split package (`@modelcontextprotocol/client` 2.x, Ajv 2020-12, formats
// asserted, in its `auto` negotiation that probes the stateless era first). Each lists the
// tools (which is what makes a client check results against the tool's `outputSchema`), then
// makes every call of a calls file and checks that the SDK accepted the result.
//
// usage: node tests/mcp/client_check.mjs <url> <token> <v1|v2> <calls.json>
//   calls.json: [{ "name": "...", "arguments": {...}, "status": "ok" | "error:<kind>" }, ...]
// Prints one line per check; exits 1 on any failure.

import { readFileSync } from 'node:fs';

const [url, token, line, callsFile] = process.argv.slice(2);
const calls = JSON.parse(readFileSync(callsFile, 'utf8'));
let failures = 0;

function check(name, ok, detail = '') {
  if (!ok) failures += 1;
  console.log(`[${ok ? 'PASS' : 'FAIL'}] ${line} ${name}${detail ? ` -- ${detail}` : ''}`);
}

async function connect() {
  const requestInit = { headers: { Authorization: `Bearer ${token}` } };
  if (line === 'v1') {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const client = new Client({ name: 'structure-check', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }));
    return client;
  }
  const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  const client = new Client({ name: 'structure-check', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }));
  return client;
}

function expected(result, status) {
  const content = result.structuredContent ?? {};
  if (status.startsWith('error:')) {
    return result.isError === true && content.error?.kind === status.slice('error:'.length);
  }
  return result.isError !== true && content.status === status;
}

async function main() {
  const client = await connect();
  check('connect', true);
  const { tools } = await client.listTools();
  const tool = tools.find((each) => each.name === 'structure');
  check('tools/list has structure with an outputSchema', Boolean(tool?.outputSchema));
  for (const call of calls) {
    try {
      const result = await client.callTool({ name: 'structure', arguments: call.arguments });
      const summary = JSON.stringify(result.structuredContent ?? result.content).slice(0, 300);
      check(`${call.name}: the SDK accepts the result`, expected(result, call.status), summary);
    } catch (error) {
      check(`${call.name}: the SDK accepts the result`, false, `${error?.name}: ${error?.message}`);
    }
  }
  await client.close();
}

try {
  await main();
} catch (error) {
  check('session', false, `${error?.name}: ${error?.message}`);
}
console.log(`${failures === 0 ? 'OK' : 'FAILED'}: ${failures} failure(s)`);
process.exit(failures === 0 ? 0 : 1);
