import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { expandFields } from '../../../../src/sync/job-spec/field-schemas.ts';
import { JobSpecError } from '../../../../src/sync/job-spec/job-spec-error.ts';
import { loadJobSpec, parseJobSpec } from '../../../../src/sync/job-spec/load-job-spec.ts';
import { SOURCE_TYPES } from '../../../../src/sync/job-spec/source-schemas.ts';

const EXAMPLES = fileURLToPath(new URL('../../../../jobs/examples/', import.meta.url));

// The issue's text, verbatim: the core format is a public contract.
const ISSUE_EXAMPLE = `name: orders
source: { type: csv, path: ./data/orders.csv }   # csv | ndjson | json | http | postgres | mysql | worksheet
target:
  worksheet: orders          # worksheet id or alias
  mode: upsert               # append | upsert | update | mirror
  key: order_no              # the target field matched for upsert, update and mirror
  batchSize: 100
  triggerWorkflow: false
fields:                      # target field (id or alias) -> where its value comes from
  order_no: Order Number     # shorthand: a source column
  amount: { from: Total }
  status: { from: Status }   # option text -> option key, from the worksheet structure
  placed: { from: Date, format: DD/MM/YYYY, timezone: Asia/Shanghai }
  channel: { value: web }    # a constant
schedule: "*/15 * * * *"     # optional: cron, registered as a BullMQ job scheduler
incremental: { cursor: updated_at }   # optional: only source rows past the saved cursor
`;

describe('the issue example', () => {
  it('is the committed jobs/examples/orders.yaml, unchanged apart from the schema comment', async () => {
    const text = await readFile(`${EXAMPLES}orders.yaml`, 'utf8');
    expect(text).toBe(`# yaml-language-server: $schema=../job-spec.schema.json\n${ISSUE_EXAMPLE}`);
  });

  it('loads exactly as written, defaults filled in and fields expanded in order', async () => {
    const spec = await loadJobSpec(`${EXAMPLES}orders.yaml`);
    expect(spec).toEqual({
      name: 'orders',
      source: { type: 'csv', path: './data/orders.csv' },
      target: {
        worksheet: 'orders',
        mode: 'upsert',
        key: 'order_no',
        batchSize: 100,
        triggerWorkflow: false,
      },
      fields: {
        order_no: 'Order Number',
        amount: { from: 'Total' },
        status: { from: 'Status' },
        placed: { from: 'Date', format: 'DD/MM/YYYY', timezone: 'Asia/Shanghai' },
        channel: { value: 'web' },
      },
      schedule: '*/15 * * * *',
      incremental: { cursor: 'updated_at' },
      options: {
        deleteThreshold: 0.1,
        forceDelete: false,
        permanentDelete: false,
        createMissingOptions: false,
      },
      mappings: [
        { target: 'order_no', from: 'Order Number' },
        { target: 'amount', from: 'Total' },
        { target: 'status', from: 'Status' },
        { target: 'placed', from: 'Date', format: 'DD/MM/YYYY', timezone: 'Asia/Shanghai' },
        { target: 'channel', value: 'web' },
      ],
    });
  });
});

describe('defaults and expansion', () => {
  const minimal = (extra = ''): string =>
    `name: minimal\nsource: { type: ndjson, path: in.ndjson }\ntarget: { worksheet: ws }\nfields: { a: A }\n${extra}`;

  it('fills in mode append, batch size 100, no workflow trigger and the mirror safety options', () => {
    const spec = parseJobSpec(minimal(), 'jobs/minimal.yaml');
    expect(spec.target).toEqual({ worksheet: 'ws', mode: 'append', batchSize: 100, triggerWorkflow: false });
    expect(spec.options).toEqual({
      deleteThreshold: 0.1,
      forceDelete: false,
      permanentDelete: false,
      createMissingOptions: false,
    });
    expect(spec.schedule).toBeUndefined();
    expect('incremental' in spec).toBe(false);
  });

  it('gives mappings without a zone the job-wide options.timezone, and keeps their own zone', () => {
    const spec = parseJobSpec(
      `name: zoned\nsource: { type: ndjson, path: in.ndjson }\ntarget: { worksheet: ws }\n` +
        `fields:\n  a: A\n  b: { from: B, timezone: Asia/Tokyo }\noptions: { timezone: Europe/Berlin }\n`,
      'jobs/zoned.yaml',
    );
    expect(spec.mappings).toEqual([
      { target: 'a', from: 'A', timezone: 'Europe/Berlin' },
      { target: 'b', from: 'B', timezone: 'Asia/Tokyo' },
    ]);
  });

  it('keeps every mapping option, constants of any type (null too) and defaults', () => {
    expect(
      expandFields({
        owner: { from: 'Owner', lookupBy: 'email', default: 'ops@example.com' },
        customer: { from: 'Customer', relationKey: 'customer_no' },
        tier: { from: 'Tier', createOptions: true },
        qty: { value: 0 },
        note: { value: null },
      }),
    ).toEqual([
      { target: 'owner', from: 'Owner', lookupBy: 'email', default: 'ops@example.com' },
      { target: 'customer', from: 'Customer', relationKey: 'customer_no' },
      { target: 'tier', from: 'Tier', createOptions: true },
      { target: 'qty', value: 0 },
      { target: 'note', value: null },
    ]);
  });

  it('understands YAML anchors and merge keys, so jobs can share blocks', () => {
    const spec = parseJobSpec(
      `name: merged\nsource: &src { type: ndjson, path: in.ndjson }\n` +
        `target:\n  <<: { worksheet: ws, mode: upsert, key: a }\n  batchSize: 10\nfields: { a: A }\n`,
      'jobs/merged.yaml',
    );
    expect(spec.target).toEqual({
      worksheet: 'ws',
      mode: 'upsert',
      key: 'a',
      batchSize: 10,
      triggerWorkflow: false,
    });
  });

  it('accepts a .yml file whose base name is the job name', () => {
    expect(parseJobSpec(minimal().replace('minimal', 'other'), '/srv/jobs/other.yml').name).toBe('other');
  });
});

describe('jobs/examples', () => {
  it('has one example per source type and a pull job, and every one loads', async () => {
    const files = (await readdir(EXAMPLES)).filter((file) => file.endsWith('.yaml'));
    const specs = await Promise.all(files.map((file) => loadJobSpec(`${EXAMPLES}${file}`)));
    const pushSources = new Set(
      specs.filter((spec) => spec.target !== undefined).map((spec) => spec.source.type),
    );
    // Every source type the schema knows, so a new type without an example fails here.
    expect([...pushSources].sort()).toEqual([...SOURCE_TYPES].sort());
    expect(specs.map((spec) => spec.target?.mode)).toContain('two-way');
    const pulls = specs.filter((spec) => spec.sink !== undefined);
    expect(pulls.map((spec) => spec.sink?.type)).toContain('postgres');
    for (const [index, spec] of specs.entries()) expect(`${spec.name}.yaml`).toBe(files[index]);
  });

  it('carry the editor schema comment', async () => {
    for (const file of (await readdir(EXAMPLES)).filter((name) => name.endsWith('.yaml'))) {
      const text = await readFile(`${EXAMPLES}${file}`, 'utf8');
      expect(text.split('\n')[0], file).toBe('# yaml-language-server: $schema=../job-spec.schema.json');
    }
  });
});

describe('loadJobSpec', () => {
  it('reports a missing file as a JobSpecError naming the file', async () => {
    const file = `${EXAMPLES}does-not-exist.yaml`;
    const error = await loadJobSpec(file).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(JobSpecError);
    expect((error as JobSpecError).issues).toEqual([
      { file, path: '', message: 'cannot be read: no such file' },
    ]);
  });
});
