// The component the package ships is the one the host runs: pre-initialised (by the `structure`
// command, see host/src/preinit.rs) from the component the host embeds (component-build's
// output), and the one jco transpiled.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const js = join(dirname(fileURLToPath(import.meta.url)), '..');
const targetDir = process.env.CARGO_TARGET_DIR ?? join(js, '..', 'target');
const sha256 = (...parts) => parts.reduce((hash, part) => hash.update(part), createHash('sha256')).digest('hex');

test('the shipped component is pre-initialised from the component the host embeds', {
  skip: process.env.STRUCTURE_WASM && 'STRUCTURE_WASM names another component',
}, () => {
  const shipped = JSON.parse(readFileSync(join(js, 'dist/component.json'), 'utf8'));
  assert.ok(shipped.preinitialisedFrom, `${shipped.file} is not pre-initialised`);
  const embedded = readFileSync(join(targetDir, 'component/structure.wasm'));
  assert.equal(shipped.preinitialisedFrom, sha256(embedded), 'pre-initialised from another build of the component');

  const jcoVersion = JSON.parse(
    readFileSync(join(js, 'node_modules/@bytecodealliance/jco/package.json'), 'utf8'),
  ).version;
  const transpiled = sha256(readFileSync(shipped.file), jcoVersion);
  for (const build of ['node', 'web']) {
    const stamp = readFileSync(join(js, 'dist', build, '.source'), 'utf8');
    assert.ok(stamp.startsWith(`${transpiled} `), `dist/${build} was transpiled from another file`);
  }
});
