/**
 * Issue 23 §3: a pull into Postgres makes a multi-value field (options, members,
 * departments, related rows, attachments) a jsonb array of what the pull writes for each
 * value (option text, member name, department name, related row title, `name (url)`), so
 * `tags @> '["A"]'` finds a row; single-value fields stay text, an empty list is NULL.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { killChildren, spawnCli } from '../helpers/cli-process.ts';
import { PG_URL, pgQuery } from '../helpers/pg.ts';
import { createHarness } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';
import type { CreateWorksheetInput } from '../../src/api/types.ts';

const ADA = 'a0000000-0000-4000-8000-000000000001';
const BEN = 'a0000000-0000-4000-8000-000000000002';
const HEAD_OFFICE = 'd0000000-0000-4000-8000-0000000000d1';
const ENGINEERING = 'd0000000-0000-4000-8000-0000000000d4';

/** The emulator takes `subType`; the field definition type does not name it. */
type Field = CreateWorksheetInput['fields'][number] & { subType?: number };

describe(
  'a pull into postgres writes multi-value fields as jsonb arrays, from the CLI',
  { timeout: 120_000 },
  () => {
    const SCHEMA = `rb_pull_lists_${process.pid}`;
    const children: ChildProcess[] = [];
    let h: Harness;

    beforeAll(async () => {
      h = await createHarness('pull-lists', {}, { EXPORT_DB: PG_URL });
      const parts = h.createWorksheet({
        name: 'Parts',
        alias: 'parts',
        fields: [{ name: 'Title', alias: 'title', type: 'Text', isTitle: true }],
      });
      const made = await h.rt.clientFor().rows.batchCreate(parts, {
        rows: [{ fields: [{ id: 'title', value: 'Bolt, M6' }] }, { fields: [{ id: 'title', value: 'Nut' }] }],
      });
      const fields: Field[] = [
        { name: 'Code', alias: 'code', type: 'Text', isTitle: true },
        {
          name: 'Tags',
          alias: 'tags',
          type: 'MultipleSelect',
          options: [
            { value: 'A', index: 1 },
            { value: 'B, C', index: 2 },
          ],
        },
        { name: 'Stage', alias: 'stage', type: 'SingleSelect', options: [{ value: 'Gold', index: 1 }] },
        { name: 'Lead', alias: 'lead', type: 'Collaborator', subType: 0 },
        { name: 'Team', alias: 'team', type: 'Collaborator', subType: 1 },
        { name: 'Units', alias: 'units', type: 'Department' },
        { name: 'Uses', alias: 'uses', type: 'Relation', dataSource: parts, subType: 2 },
        { name: 'Files', alias: 'files', type: 'Attachment' },
      ];
      const ws = h.createWorksheet({ name: 'Kits', alias: 'kits', fields });
      await h.rt.clientFor().rows.batchCreate(ws, {
        rows: [
          {
            fields: [
              { id: 'code', value: 'K-1' },
              { id: 'tags', value: ['A', 'B, C'], type: '2' },
              { id: 'stage', value: ['Gold'], type: '2' },
              { id: 'lead', value: [ADA] },
              { id: 'team', value: [ADA, BEN] },
              { id: 'units', value: [HEAD_OFFICE, ENGINEERING] },
              { id: 'uses', value: made.rowIds },
              { id: 'files', value: [{ name: 'plan.pdf', url: 'https://files.test/plan.pdf' }] },
            ],
          },
          { fields: [{ id: 'code', value: 'K-2' }] },
        ],
      });
      await pgQuery(`CREATE SCHEMA ${SCHEMA}`);
    });
    afterEach(() => killChildren(children));
    afterAll(async () => {
      await pgQuery(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
      await h?.close();
    });

    it('createTable makes them jsonb, holds the texts as arrays, and an empty list is NULL', async () => {
      await h.writeJob(
        'kits',
        `name: kits
source: { type: worksheet, worksheet: kits }
sink: { type: postgres, urlEnv: EXPORT_DB, table: ${SCHEMA}.kits, key: code, createTable: true }
fields: { code: code, tags: tags, stage: stage, lead: lead, team: team, units: units, uses: uses, files: files }
`,
      );
      const run = await spawnCli(h, children, ['run', 'kits']).exited;
      expect(run.code, run.stderr).toBe(0);
      const types = await pgQuery<{ column_name: string; data_type: string }>(
        `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = '${SCHEMA}' AND table_name = 'kits'`,
      );
      expect(Object.fromEntries(types.map((t) => [t.column_name, t.data_type]))).toEqual({
        code: 'text',
        tags: 'jsonb',
        stage: 'text',
        lead: 'text',
        team: 'jsonb',
        units: 'jsonb',
        uses: 'jsonb',
        files: 'jsonb',
      });
      const rows = await pgQuery<Record<string, unknown>>(
        `SELECT code, tags, stage, lead, team, units, uses, files FROM ${SCHEMA}.kits ORDER BY code`,
      );
      expect(rows).toEqual([
        {
          code: 'K-1',
          tags: ['A', 'B, C'],
          stage: 'Gold',
          lead: 'Ada Admin',
          team: ['Ada Admin', 'Ben Sales'],
          units: ['Head Office', 'Engineering'],
          uses: ['Bolt, M6', 'Nut'],
          files: ['plan.pdf (https://files.test/plan.pdf)'],
        },
        {
          code: 'K-2',
          tags: null,
          stage: null,
          lead: null,
          team: null,
          units: null,
          uses: null,
          files: null,
        },
      ]);
      const tagged = await pgQuery<{ code: string }>(
        `SELECT code FROM ${SCHEMA}.kits WHERE tags @> '["B, C"]' AND team @> '["Ben Sales"]'`,
      );
      expect(tagged).toEqual([{ code: 'K-1' }]);
    });

    it('a csv pull keeps the joined text of the same values', async () => {
      await h.writeJob(
        'kits-csv',
        `name: kits-csv
source: { type: worksheet, worksheet: kits }
sink: { type: csv, path: ./kits.csv, key: code }
fields: { code: code, team: team }
`,
      );
      const run = await spawnCli(h, children, ['run', 'kits-csv']).exited;
      expect(run.code, run.stderr).toBe(0);
      const { readFile } = await import('node:fs/promises');
      const text = await readFile(`${h.dir}/kits.csv`, 'utf8');
      expect(text).toContain('K-1,"Ada Admin, Ben Sales"');
    });
  },
);
