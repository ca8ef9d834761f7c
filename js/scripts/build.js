// `npm run build`: builds the component as the host runs it (cargo builds it, the `structure`
// command pre-initialises it), transpiles it with jco for Node (`dist/node`) and for browsers with
// JSPI (`dist/web`), and bundles the demo page (`dist/demo`). Set STRUCTURE_WASM to transpile a
// component built elsewhere. A step whose inputs have not changed is skipped.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const js = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(js, 'dist');
const run = (command, args, options = {}) =>
  execFileSync(command, args, { cwd: js, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...options });

const targetDir = process.env.CARGO_TARGET_DIR ?? join(js, '..', 'target');
const wasm = process.env.STRUCTURE_WASM ?? buildReadyComponent();
const ready = readFileSync(wasm);
// What test/component.test.js checks: the component shipped is pre-initialised from the one the
// host embeds.
mkdirSync(dist, { recursive: true });
writeFileSync(
  join(dist, 'component.json'),
  JSON.stringify({ file: wasm, preinitialisedFrom: preinitialisedFrom(ready) }),
);
const jcoVersion = JSON.parse(readFileSync(join(js, 'node_modules/@bytecodealliance/jco/package.json'))).version;
const digest = createHash('sha256').update(ready).update(jcoVersion).digest('hex');

const EXPORTS = ['structure:tool/structuring#structure', 'structure:tool/structuring#call-tool'];
const builds = {
  node: [],
  // JSPI: exports that reach an LLM call return Promises and suspend while fetch waits.
  web: ['--no-nodejs-compat', '--async-mode', 'jspi', '--async-wasi-imports', '--async-exports', ...EXPORTS],
};
for (const [name, flags] of Object.entries(builds)) {
  const out = join(dist, name);
  const stamp = join(out, '.source');
  const wanted = `${digest} ${flags.join(' ')}`;
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) continue;
  rmSync(out, { recursive: true, force: true });
  run(join(js, 'node_modules/.bin/jco'), [
    'transpile',
    wasm,
    '--name',
    'structure',
    '--instantiation',
    'async',
    '--quiet',
    '-o',
    out,
    ...flags,
  ]);
  writeFileSync(stamp, wanted);
  console.log(`built dist/${name} from ${wasm}`);
}

// The demo page: one bundle, the page and the core modules it loads (see demo/main.js).
const demo = join(dist, 'demo');
mkdirSync(join(demo, 'wasm'), { recursive: true });
await esbuild.build({
  entryPoints: [join(js, 'demo/main.js')],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  sourcemap: true,
  outfile: join(demo, 'app.js'),
  logLevel: 'warning',
});
cpSync(join(js, 'demo/index.html'), join(demo, 'index.html'));
for (const file of readdirSync(join(dist, 'web')).filter((name) => name.endsWith('.wasm'))) {
  cpSync(join(dist, 'web', file), join(demo, 'wasm', file));
}

/** Builds the host (whose build script builds the component) and writes the pre-initialised component. */
function buildReadyComponent() {
  const out = join(targetDir, 'component', 'structure.ready.wasm');
  run('cargo', ['run', '--quiet', '--package', 'structure-host', '--', 'component', '--output', out]);
  return out;
}

/**
 * The SHA-256 (hex) of the component `wasm` was pre-initialised from: the data of the
 * `structure-preinitialised` custom section the host appends last; null when there is none.
 */
function preinitialisedFrom(wasm) {
  const name = Buffer.from('structure-preinitialised');
  const digestLength = 64;
  const at = wasm.length - digestLength - name.length;
  if (at < 0 || !wasm.subarray(at, at + name.length).equals(name)) return null;
  return wasm.subarray(wasm.length - digestLength).toString('latin1');
}
