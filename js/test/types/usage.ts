// Compiled (not run) by test/types.test.js: the declarations accept real usage and refuse mistakes.
import { createStructure, memoryKeyValue, StructureError, type Outcome } from 'structure-tool';

const structure = await createStructure({
  config: { structure_model: 'openai/gpt-4.1-mini', openai_api_key: 'sk-...' },
  keyValue: memoryKeyValue(),
});
const outcome: Outcome = await structure.structure({ prompt: 'Ada, ada@example.org', schema: 'contact', schemaMode: 'named' });
if (outcome.status === 'ok') {
  const data: Record<string, unknown> = outcome.data;
  for (const source of outcome.sources) {
    if (source.match !== 'derived') {
      const shown: string = 'Ada, ada@example.org'.slice(source.utf16Start, source.utf16End);
      void [shown, source.start, source.text];
    }
  }
  void data;
} else if (outcome.status === 'need-more-input') {
  const need: string = outcome.need;
  void need;
} else {
  const errors: string[] = outcome.errors;
  void errors;
}
const feedback: string[] = outcome.trace.feedback;
const calls: number = outcome.usage.llmCalls;
void [feedback, calls];

const seats = await structure.structure<number>({ prompt: 'The van has 9 seats.', schema: { type: 'integer' } });
if (seats.status === 'ok') {
  const count: number = seats.data;
  void count;
}

const found = await structure.structure({ prompt: 'Ada ordered 2 pens. Alan ordered a lamp.', schema: {}, records: true });
if (found.status === 'ok') {
  const records: Record<string, unknown>[] = found.data;
  const lacking: string[] = found.incomplete.map((incomplete) => incomplete.need);
  void [records, lacking];
}
// @ts-expect-error: a records outcome never asks for more input
if (found.status === 'need-more-input') void found;

for await (const result of structure.structureEach([{ id: 1, prompt: 'Ada', schema: 'contact', schemaMode: 'named' }], { jobs: 8 })) {
  if ('outcome' in result) console.log(result.id, result.outcome.status);
  else console.log(result.id, result.error.kind);
}
// @ts-expect-error: every item needs an id
structure.structureEach([{ prompt: 'Ada', schema: 'contact' }]);

try {
  await structure.withScope({ tenant: 'acme', project: 'crm' }).getSchema('lead');
} catch (error) {
  if (error instanceof StructureError && error.kind === 'schema-not-found') console.log(error.detail);
}

// @ts-expect-error: data exists only on an ok outcome
void outcome.data;
// @ts-expect-error: sources exist only on an ok outcome
void outcome.sources;
// @ts-expect-error: the prompt is text
await structure.structure({ prompt: 42, schema: {} });
// A document alone, as bytes or as the tool arguments carry it.
await structure.structure({ document: new Uint8Array([37, 80, 68, 70, 45]), schema: {}, returnText: true });
await structure.structure({ document: { mediaType: 'application/pdf', data: 'JVBERi0=' }, schema: {} });
// @ts-expect-error: a prompt or a document
await structure.structure({ schema: {} });
// Images and Word documents are documents too; the media type may be left to the name or bytes.
await structure.structure({ document: { mediaType: 'image/png', data: '' }, schema: {} });
await structure.structure({ document: { name: 'invoice.docx', data: '' }, schema: {} });
// @ts-expect-error: the documents read are PDFs, Word, web pages, text and images
await structure.structure({ document: { mediaType: 'application/zip', data: '' }, schema: {} });
// @ts-expect-error: a document is its bytes
await structure.structure({ document: { mediaType: 'image/png' }, schema: {} });
// @ts-expect-error: not a schema mode
await structure.structure({ prompt: 'x', schema: 'y', schemaMode: 'yaml' });
// @ts-expect-error: a scope needs a tenant
structure.withScope({ project: 'crm' });

const pooled = await createStructure({ config: {}, workers: 2 });
await pooled.close();
// @ts-expect-error: workers is a count
await createStructure({ workers: 'two' });
