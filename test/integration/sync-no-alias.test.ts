import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { createSource } from '../../src/sync/sources/create-source.ts';
import { collect } from '../fixtures/sources/source-test-kit.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/**
 * Aliases are optional on the platform and often empty, and what key a list answer gives
 * such a field in alias mode is undocumented (platform-shapes §5 [U]; the emulator uses
 * the field's name). Jobs name these fields by id: every run, the second included, must
 * find its rows by them.
 */
describe('a worksheet whose key and mapped fields have no alias', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await createHarness('noalias');
  });
  afterAll(async () => {
    await h.close();
  });

  /** A worksheet without aliases, itself named by id in the jobs. */
  const sheet = (name: string): { ws: string; code: string; qty: string; note: string } => {
    const structure: WorksheetStructure = h.emulator.createWorksheet(h.appId, {
      name,
      fields: [
        { name: 'Code', type: '2', required: true, isTitle: true },
        { name: 'Qty', type: '6' },
        { name: 'Note', type: '2' },
      ],
    });
    const id = (fieldName: string) => structure.fields.find((f) => f.name === fieldName)!.id;
    return { ws: structure.id, code: id('Code'), qty: id('Qty'), note: id('Note') };
  };

  const csv = (rows: number) =>
    ['Code,Qty,Note', ...Array.from({ length: rows }, (_, i) => `K-${i + 1},${i + 1},n${i + 1}`)].join('\n') +
    '\n';

  const pushJob = (name: string, mode: string, s: ReturnType<typeof sheet>) => `name: ${name}
source: { type: csv, path: ./${name}.csv }
target:
  worksheet: ${s.ws}
  mode: ${mode}
  key: ${s.code}
  batchSize: 4
  triggerWorkflow: false
fields:
  ${s.code}: Code
  ${s.qty}: { from: Qty }
  ${s.note}: { from: Note }
`;

  /** Requests that change the platform, made since `from`. */
  const writesSince = (from: number) =>
    h.emulator.requests.slice(from).filter((r) => r.method !== 'GET' && !r.path.endsWith('/list'));

  it.each(['upsert', 'mirror'])(
    '%s twice: the second run writes nothing and creates no duplicate',
    async (mode) => {
      const s = sheet(`Parts ${mode}`);
      const job = `parts-${mode}`;
      await h.writeFile(`${job}.csv`, csv(10));
      await h.writeJob(job, pushJob(job, mode, s));

      const first = await h.runJob(job);
      expect(first.record.status).toBe('completed');
      expect(first.report).toMatchObject({ read: 10, created: 10, deadLetteredTotal: 0 });
      expect(h.emulator.state.rows(s.ws).find((r) => r.text[s.code] === 'K-3')?.text).toMatchObject({
        [s.qty]: '3',
        [s.note]: 'n3',
      });

      const before = h.emulator.requests.length;
      const second = await h.runJob(job);
      expect(second.record.status).toBe('completed');
      expect(second.report).toMatchObject({ read: 10, created: 0, updated: 0, unchanged: 10, deleted: 0 });
      expect(writesSince(before)).toEqual([]);
      expect(h.emulator.state.rowCount(s.ws)).toBe(10);
    },
  );

  it('pull twice: every value lands under its column, and the re-run merges onto the same rows', async () => {
    const s = sheet('Parts pull');
    const client = h.rt.clientFor();
    await client.rows.batchCreate(s.ws, {
      rows: Array.from({ length: 6 }, (_, i) => ({
        fields: [
          { id: s.code, value: `P-${i + 1}` },
          { id: s.qty, value: i + 1 },
          { id: s.note, value: `n${i + 1}` },
        ],
      })),
    });
    await h.writeJob(
      'parts-pull',
      `name: parts-pull
source: { type: worksheet, worksheet: ${s.ws} }
sink: { type: csv, path: ./parts-pull.csv, key: code }
fields: { code: ${s.code}, qty: ${s.qty}, note: ${s.note} }
`,
    );
    const readCsv = async () =>
      (await collect(createSource({ type: 'csv', path: 'parts-pull.csv' }, { env: {}, baseDir: h.dir })))
        .map((i) => i.data)
        .sort((a, b) => String(a.code).localeCompare(String(b.code)));
    const expected = Array.from({ length: 6 }, (_, i) => ({
      code: `P-${i + 1}`,
      qty: String(i + 1),
      note: `n${i + 1}`,
    }));

    for (let run = 0; run < 2; run++) {
      const before = h.emulator.requests.length;
      const pulled = await h.runJob('parts-pull');
      expect(pulled.record.status).toBe('completed');
      expect(await readCsv()).toEqual(expected);
      expect(writesSince(before)).toEqual([]);
    }
    expect(h.emulator.state.rowCount(s.ws)).toBe(6);
  });
});
