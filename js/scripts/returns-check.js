// Writes test/types/returns.check.ts: type assertions, one set per object of the published
// result schema (the tool definition's `returns`, src/tool_definition/returns.json, which is
// generated from the Rust types that serialise a result), that index.d.ts's `Outcome` and
// `RecordsOutcome` name the same fields, require the same ones, and give enums the same values.
// test/types.test.js runs it, then compiles the checks with tsc: a field the result gained and
// the declarations did not is a compile error naming its path.
import { readFileSync, writeFileSync } from 'node:fs';

const returns = JSON.parse(readFileSync(new URL('../../src/tool_definition/returns.json', import.meta.url), 'utf8'));
// The outcome's branch (the other is `{ "error": ... }`, which the package throws as a StructureError).
const outcome = returns.anyOf.find((branch) => branch.properties?.status);

/** The properties a value at this node may have: its own and those of its oneOf/anyOf branches. */
function propertiesOf(schema) {
  const properties = { ...(schema.properties ?? {}) };
  for (const branch of [...(schema.oneOf ?? []), ...(schema.anyOf ?? [])]) {
    for (const [name, property] of Object.entries(propertiesOf(branch))) properties[name] ??= property;
  }
  return properties;
}

const literal = (value) => JSON.stringify(value);
const union = (values) => (values.length ? values.map(literal).join(' | ') : 'never');
const checks = [];

function check(path, assertion) {
  checks.push(`// ${path}\ntype _${checks.length} = Expect<${assertion}>;`);
}

/** The assertions for the value at `path`, whose type is `type` (a TypeScript type expression). */
function walk(schema, type, path) {
  if (schema === true || typeof schema !== 'object') return;
  const properties = propertiesOf(schema);
  const names = Object.keys(properties);
  if (names.length) {
    check(path, `Same<KeysOf<${type}>, ${union(names)}>`);
    check(`${path} (required)`, `Same<RequiredOf<${type}>, ${union(schema.required ?? [])}>`);
    for (const [name, property] of Object.entries(properties)) {
      walk(property, `NonNullable<Field<${type}, ${literal(name)}>>`, `${path}.${name}`);
    }
  }
  if (typeof schema.additionalProperties === 'object')
    walk(schema.additionalProperties, `${type}[string]`, `${path}[key]`);
  if (typeof schema.items === 'object') walk(schema.items, `Element<${type}>`, `${path}[]`);
  // An enum's values, or the constants of its documented cases.
  const cases = schema.oneOf?.every((branch) => 'const' in branch) ? schema.oneOf.map((branch) => branch.const) : null;
  const values = schema.enum ?? cases;
  if (values) check(path, `Same<${type}, ${union(values)}>`);
  const primitive = { string: 'string', integer: 'number', number: 'number', boolean: 'boolean' }[schema.type];
  if (primitive && !values) check(path, `Same<${type}, ${primitive}>`);
}

walk(outcome, 'Outcome | RecordsOutcome', 'outcome');

const file = `// Written by scripts/returns-check.js from src/tool_definition/returns.json: do not edit.
import type { Outcome, RecordsOutcome } from 'structure-tool';

type Expect<T extends true> = T;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Every key of any member of a union. */
type KeysOf<T> = T extends unknown ? keyof T : never;
/** The keys every member of a union requires. */
type RequiredOf<T> = [T] extends [never] ? never : Common<T extends unknown ? Required1<T> : never, T>;
type Required1<T> = { [K in keyof T]-?: Record<never, never> extends Pick<T, K> ? never : K }[keyof T];
type Common<Keys, T> = Keys extends unknown
  ? (T extends unknown ? (Keys extends Required1<T> ? 0 : 1) : never) extends 0
    ? Keys
    : never
  : never;
/** A field of whichever members of a union have it. */
type Field<T, K extends PropertyKey> = T extends unknown ? (K extends keyof T ? T[K] : never) : never;
type Element<T> = T extends readonly (infer E)[] ? E : never;

${checks.join('\n')}
`;
writeFileSync(new URL('../test/types/returns.check.ts', import.meta.url), file);
