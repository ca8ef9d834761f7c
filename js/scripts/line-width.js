// The 120-column limit, for what Biome's formatter (lineWidth 120, biome.json at the root of the
// repository) cannot break: comments, strings and test names. `npm run lint` runs it after Biome,
// over the same JavaScript: the console's and this package's.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const LIMIT = 120;
const root = fileURLToPath(new URL('../..', import.meta.url));
const folders = ['console', 'js/src', 'js/scripts', 'js/test', 'js/demo'];

const long = [];
for (const folder of folders) {
  const files = readdirSync(join(root, folder), { recursive: true }).filter((name) => name.endsWith('.js'));
  for (const file of files.sort()) {
    const path = join(root, folder, file);
    readFileSync(path, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        // Columns as people count them: code points, not UTF-16 units.
        const width = [...line].length;
        if (width > LIMIT) long.push(`${relative(root, path)}:${i + 1}: ${width} columns`);
      });
  }
}
if (long.length > 0) {
  console.error(`${long.length} line(s) over ${LIMIT} columns:\n${long.join('\n')}`);
  process.exit(1);
}
