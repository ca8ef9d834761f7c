// The TypeScript declarations compile against real usage, including what they must refuse, and name
// the result's fields as the published result schema does (scripts/returns-check.js writes those checks).
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

test('index.d.ts types real usage, refuses mistakes and matches the published result schema', () => {
  execFileSync(process.execPath, [new URL('../scripts/returns-check.js', import.meta.url).pathname]);
  const tsc = new URL('../node_modules/.bin/tsc', import.meta.url).pathname;
  execFileSync(tsc, ['-p', new URL('./types/tsconfig.json', import.meta.url).pathname], { stdio: 'inherit' });
});
