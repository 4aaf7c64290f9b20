import { describe, expect, it } from 'vitest';
import { JobSpecError } from '../../../../src/sync/job-spec/job-spec-error.ts';
import type { JobSpecIssue } from '../../../../src/sync/job-spec/job-spec-error.ts';
import { parseJobSpec } from '../../../../src/sync/job-spec/load-job-spec.ts';

const FILE = 'jobs/orders.yaml';

const BASE = `name: orders
source: { type: csv, path: ./orders.csv }
target:
  worksheet: orders
  mode: upsert
  key: order_no
fields:
  order_no: Order Number
  amount: { from: Total }
`;

function rejection(text: string, file = FILE): JobSpecError {
  try {
    parseJobSpec(text, file);
  } catch (error) {
    if (error instanceof JobSpecError) return error;
    throw error;
  }
  throw new Error('expected the job spec to be rejected');
}

/** 1-based line of the first line containing `snippet`. */
function lineOf(text: string, snippet: string): number {
  const index = text.split('\n').findIndex((line) => line.includes(snippet));
  if (index < 0) throw new Error(`no line contains ${snippet}`);
  return index + 1;
}

/**
 * Asserts one issue at `path`, on the line holding `onLine`, whose message matches, and
 * that the error's message lists it as `file:line:col path: message`.
 */
function expectIssue(text: string, path: string, onLine: string, message: string | RegExp): JobSpecIssue {
  const error = rejection(text);
  const issue = error.issues.find((candidate) => candidate.path === path);
  expect(issue, `no issue at ${path}; got ${error.message}`).toBeDefined();
  const found = issue!;
  expect(found.file).toBe(FILE);
  expect(found.line).toBe(lineOf(text, onLine));
  expect(found.message).toMatch(message);
  expect(error.message.split('\n')).toContain(
    `${FILE}:${found.line}:${found.column} ${path}: ${found.message}`,
  );
  return found;
}

const BASE_WITHOUT_FIELDS = BASE.slice(0, BASE.indexOf('fields:'));

function replace(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`BASE has no ${from}`);
  return text.replace(from, to);
}

describe('job spec errors: top level', () => {
  it('lists every issue, one line each, in document order', () => {
    const text = replace(replace(BASE, 'mode: upsert', 'mode: upsrt'), 'name: orders', 'name: Orders!');
    const error = rejection(text);
    const lines = error.message.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^jobs\/orders\.yaml:1:7 name: must be lower-case letters/);
    expect(lines[1]).toBe(
      'jobs/orders.yaml:5:9 target.mode: must be one of append, upsert, update, mirror, two-way; got "upsrt" (did you mean "upsert"?)',
    );
  });

  it('wants a name', () => {
    expectIssue(
      BASE.replace('name: orders\n', ''),
      'name',
      'source:',
      'is required: the job name, which equals the file name',
    );
  });

  it('wants the name to equal the file name', () => {
    expectIssue(
      replace(BASE, 'name: orders', 'name: order'),
      'name',
      'name: order',
      'must equal the file name "orders"',
    );
  });

  it('names an unknown key, the nearest known one and the allowed keys, at the key', () => {
    const text = `${BASE}schedul: "0 * * * *"\n`;
    const issue = expectIssue(
      text,
      'schedul',
      'schedul:',
      /unknown key "schedul" \(did you mean "schedule"\?\)/,
    );
    expect(issue.column).toBe(1);
    expect(issue.message).toContain(
      'allowed here: name, description, source, target, sink, fields, schedule',
    );
  });

  it('needs target or sink, and refuses both', () => {
    const neither = rejection(BASE.slice(0, BASE.indexOf('target:')) + 'fields:\n  a: A\n');
    expect(neither.issues.map((issue) => issue.message)).toContain(
      'needs target (push into a worksheet) or sink (pull a worksheet out to postgres, csv or ndjson)',
    );
    const both = `${BASE}sink: { type: ndjson, path: out.ndjson }\n`;
    expectIssue(both, 'sink', 'sink:', 'must not be given together with target');
  });

  it('wants a worksheet source for a pull job', () => {
    const text = `name: orders\nsource: { type: csv, path: in.csv }\nsink: { type: ndjson, path: out.ndjson }\nfields: { a: A }\n`;
    expectIssue(
      text,
      'source.type',
      'source:',
      'must be worksheet when the job has a sink; got "csv"'.replace(
        '; got',
        ' (a pull job reads a worksheet); got',
      ),
    );
  });

  it('rejects a schedule that is not a cron pattern, saying what cron looks like', () => {
    expectIssue(
      `${BASE}schedule: "61 * * * *"\n`,
      'schedule',
      'schedule:',
      /must be a cron expression .*"\*\/15 \* \* \* \*".*61/,
    );
  });

  it('wants incremental.cursor', () => {
    expectIssue(
      `${BASE}incremental: { column: updated_at }\n`,
      'incremental.cursor',
      'incremental:',
      'is required (text)',
    );
  });

  it('checks options: the delete share, the zone and unknown options', () => {
    expectIssue(
      `${BASE}options: { deleteThreshold: 1.5 }\n`,
      'options.deleteThreshold',
      'options:',
      'must be a share from 0 to 1 (0.1 = 10%)',
    );
    expectIssue(
      `${BASE}options: { timezone: Mars/Olympus }\n`,
      'options.timezone',
      'options:',
      /must be an IANA time zone such as UTC.*got "Mars\/Olympus"/,
    );
    expectIssue(
      `${BASE}options: { forceDelet: true }\n`,
      'options.forceDelet',
      'options:',
      'did you mean "forceDelete"?',
    );
  });

  it('points at YAML syntax errors and empty files', () => {
    const error = rejection('name: orders\ntarget:\n\tworksheet: orders\n');
    expect(error.issues[0]).toMatchObject({
      line: 3,
      column: 1,
      message: 'is not valid YAML: Tabs are not allowed as indentation',
    });
    const duplicate = rejection(`${BASE}name: again\n`);
    expect(duplicate.issues[0]).toMatchObject({
      line: 10,
      message: expect.stringMatching(/unique/i) as unknown,
    });
    expect(rejection('# nothing here\n').issues).toEqual([
      {
        file: FILE,
        path: '',
        line: 1,
        column: 1,
        message: 'is empty: a job needs name, source, target (or sink) and fields',
      },
    ]);
  });
});

describe('job spec errors: target', () => {
  it('names the allowed modes', () => {
    const issue = expectIssue(
      replace(BASE, 'mode: upsert', 'mode: upsrt'),
      'target.mode',
      'mode:',
      'must be one of append, upsert, update, mirror, two-way; got "upsrt"',
    );
    expect(issue.column).toBe(9);
  });

  it('wants a key for upsert, update and mirror', () => {
    for (const mode of ['upsert', 'update', 'mirror']) {
      const text = replace(replace(BASE, '  key: order_no\n', ''), 'mode: upsert', `mode: ${mode}`);
      expectIssue(text, 'target.key', 'target:', `is required when mode is ${mode}`);
    }
    expect(
      parseJobSpec(replace(replace(BASE, '  key: order_no\n', ''), 'mode: upsert', 'mode: append'), FILE)
        .target?.key,
    ).toBeUndefined();
  });

  it('wants the key to be a mapped field', () => {
    expectIssue(
      replace(BASE, 'key: order_no', 'key: order_id'),
      'target.key',
      'key: order_id',
      'must be one of the mapped fields (order_no, amount)',
    );
  });

  it('bounds batchSize to whole numbers from 1 to 1000', () => {
    for (const size of ['0', '1001', '2.5', 'lots']) {
      expectIssue(
        replace(BASE, 'key: order_no', `key: order_no\n  batchSize: ${size}`),
        'target.batchSize',
        'batchSize',
        'must be a whole number from 1 to 1000',
      );
    }
  });

  it('wants triggerWorkflow as true or false', () => {
    expectIssue(
      replace(BASE, 'key: order_no', 'key: order_no\n  triggerWorkflow: yes'),
      'target.triggerWorkflow',
      'triggerWorkflow',
      'must be true or false; got text',
    );
  });

  it('wants an env var prefix for another app', () => {
    expectIssue(
      replace(BASE, 'key: order_no', 'key: order_no\n  app: { credentialsEnvPrefix: other-app }'),
      'target.app.credentialsEnvPrefix',
      'app:',
      'must be an environment variable name prefix',
    );
  });
});

describe('job spec errors: fields', () => {
  it('wants fields, with at least one entry', () => {
    expectIssue(BASE_WITHOUT_FIELDS, 'fields', 'name:', 'is required (a mapping of key: value lines)');
    expectIssue(
      BASE_WITHOUT_FIELDS + 'fields: {}\n',
      'fields',
      'fields:',
      'must map at least one target field',
    );
  });

  it('wants non-empty target field names', () => {
    expectIssue(`${BASE}  "": Total\n`, 'fields[""]', '"": Total', 'the key must not be empty');
  });

  it('wants a column name or a mapping for each field', () => {
    expectIssue(
      `${BASE}  total:\n`,
      'fields.total',
      'total:',
      'needs a source column name or a mapping { from: Column } / { value: constant }; got nothing',
    );
    expectIssue(
      `${BASE}  qty: 5\n`,
      'fields.qty',
      'qty:',
      'must be a source column name (text) or a mapping',
    );
    expectIssue(`${BASE}  qty: { from: 5 }\n`, 'fields.qty.from', 'qty:', 'must be text; got number 5');
  });

  it('wants exactly one of from and value, and default only with from', () => {
    expectIssue(
      `${BASE}  qty: { from: Qty, value: 1 }\n`,
      'fields.qty.value',
      'qty:',
      'must not be given together with from',
    );
    expectIssue(
      `${BASE}  qty: { format: DD/MM/YYYY }\n`,
      'fields.qty',
      'qty:',
      'needs from (a source column) or value (a constant)',
    );
    expectIssue(
      `${BASE}  qty: { value: 1, default: 2 }\n`,
      'fields.qty.default',
      'qty:',
      'only applies with from',
    );
  });

  it('quotes field names that are not identifiers in the path', () => {
    expectIssue(
      `${BASE}  "Order No": { from: X, form: Y }\n`,
      'fields["Order No"].form',
      'Order No',
      'did you mean "from"?',
    );
  });

  it('checks date formats, zones and member lookups', () => {
    expectIssue(
      `${BASE}  placed: { from: Date, format: dd/mm/yyyy }\n`,
      'fields.placed.format',
      'placed:',
      /case-sensitive: YYYY year.*got "dd\/mm\/yyyy"/,
    );
    expectIssue(
      `${BASE}  placed: { from: Date, format: "[on] ---" }\n`,
      'fields.placed.format',
      'placed:',
      'must contain at least one dayjs token',
    );
    expectIssue(
      `${BASE}  placed: { from: Date, timezone: Asia/Shangai }\n`,
      'fields.placed.timezone',
      'placed:',
      'must be an IANA time zone such as UTC, Asia/Shanghai or Europe/Berlin; got "Asia/Shangai"',
    );
    expectIssue(
      `${BASE}  owner: { from: Owner, lookupBy: mail }\n`,
      'fields.owner.lookupBy',
      'owner:',
      'must be one of accountId, name, email; got "mail" (did you mean "email"?)',
    );
  });
});

describe('mirror and incremental reads', () => {
  it('refuses an incremental mirror, which would delete every row the increment lacks', () => {
    const text = BASE.replace('mode: upsert', 'mode: mirror') + 'incremental: { cursor: updated_at }\n';
    expectIssue(text, 'incremental', 'incremental:', /cannot be used with mode mirror/);
  });
});
