// Serves the built demo page (dist/demo): `npm run demo`, or `node scripts/serve-demo.js [port]`.
// The page calls the LLM endpoint typed into it straight from the browser (the endpoint must allow
// CORS); nothing goes through this server.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json',
  '.wasm': 'application/wasm',
};

/** Serves `root` on 127.0.0.1:`port` (0 = any free port); resolves to the server once listening. */
export async function serveDirectory(root, port = 0) {
  const server = createServer(async (request, response) => {
    const pathname = decodeURIComponent(new URL(request.url, 'http://page').pathname);
    const asked = normalize(pathname).replace(/^(\.\.[/\\])+/, '');
    const path = asked.endsWith('/') ? `${asked}index.html` : asked;
    try {
      const body = await readFile(join(root, path));
      response.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream' }).end(body);
    } catch {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await serveDirectory(
    fileURLToPath(new URL('../dist/demo/', import.meta.url)),
    Number(process.argv[2] ?? 8090),
  );
  console.log(`structure demo on http://127.0.0.1:${server.address().port}/ (Ctrl-C stops it)`);
}
