// The TypeScript declarations compile against real usage, including what they must refuse.
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

test('index.d.ts types real usage and refuses mistakes', () => {
  const tsc = new URL('../node_modules/.bin/tsc', import.meta.url).pathname;
  execFileSync(tsc, ['-p', new URL('./types/tsconfig.json', import.meta.url).pathname], { stdio: 'inherit' });
});
