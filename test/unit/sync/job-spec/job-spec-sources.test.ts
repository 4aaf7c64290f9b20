import { describe, expect, it } from 'vitest';
import { JobSpecError } from '../../../../src/sync/job-spec/job-spec-error.ts';
import type { JobSpecIssue } from '../../../../src/sync/job-spec/job-spec-error.ts';
import { parseJobSpec } from '../../../../src/sync/job-spec/load-job-spec.ts';

const FILE = 'jobs/sync.yaml';
const PUSH_TAIL = 'target: { worksheet: ws }\nfields: { a: A }\n';

/** A push job with this `source:` block (indented YAML lines under `source:`). */
function withSource(sourceLines: string): string {
  return `name: sync\nsource:\n${sourceLines}${PUSH_TAIL}`;
}

function issuesOf(text: string): JobSpecIssue[] {
  try {
    parseJobSpec(text, FILE);
  } catch (error) {
    if (error instanceof JobSpecError) return error.issues;
    throw error;
  }
  throw new Error('expected the job spec to be rejected');
}

function lineOf(text: string, snippet: string): number {
  const index = text.split('\n').findIndex((line) => line.includes(snippet));
  if (index < 0) throw new Error(`no line contains ${snippet}`);
  return index + 1;
}

/** The one issue at `path`, asserted to sit on the line holding `onLine`. */
function issueAt(text: string, path: string, onLine: string): JobSpecIssue {
  const issues = issuesOf(text);
  const issue = issues.find((candidate) => candidate.path === path);
  expect(issue, `no issue at ${path}: ${JSON.stringify(issues)}`).toBeDefined();
  expect(issue!.file).toBe(FILE);
  expect(issue!.line).toBe(lineOf(text, onLine));
  return issue!;
}

describe('source type', () => {
  it('names the allowed types and the nearest one', () => {
    const text = withSource('  type: postgresql\n  urlEnv: DB_URL\n');
    expect(issueAt(text, 'source.type', 'type: postgresql').message).toBe(
      'must be one of csv, ndjson, json, http, postgres, mysql, postgres-cdc, worksheet, singer; got "postgresql" (did you mean "postgres"?)',
    );
  });

  it('wants a type at all', () => {
    const text = withSource('  path: orders.csv\n');
    expect(issueAt(text, 'source.type', 'source:').message).toBe(
      'is required: one of csv, ndjson, json, http, postgres, mysql, postgres-cdc, worksheet, singer',
    );
  });

  it('checks keys against the chosen type', () => {
    const text = withSource('  type: ndjson\n  path: in.ndjson\n  delimiter: ";"\n');
    expect(issueAt(text, 'source.delimiter', 'delimiter').message).toBe(
      'unknown key "delimiter"; allowed here: type, path',
    );
  });
});

describe('file sources', () => {
  it('csv: encoding, quote and a path', () => {
    const encoding = withSource('  type: csv\n  path: in.csv\n  encoding: utf-16\n');
    expect(issueAt(encoding, 'source.encoding', 'encoding').message).toBe(
      'must be one of utf8, latin1, gbk, gb18030, utf16le; got "utf-16"',
    );
    const quote = withSource('  type: csv\n  path: in.csv\n  quote: "\'\'"\n');
    expect(issueAt(quote, 'source.quote', 'quote').message).toBe('must be a single character');
    const noPath = withSource('  type: csv\n  header: false\n');
    expect(issueAt(noPath, 'source.path', 'source:').message).toBe('is required (text)');
  });

  it('json: itemsPath must not be empty', () => {
    const text = withSource('  type: json\n  path: in.json\n  itemsPath: ""\n');
    expect(issueAt(text, 'source.itemsPath', 'itemsPath').message).toBe('must not be empty');
  });
});

describe('http source', () => {
  const http = (lines: string): string =>
    withSource(`  type: http\n  url: https://api.example.com/items\n${lines}`);

  it('accepts credentials only as ${ENV} references, with or without an auth scheme', () => {
    const spec = parseJobSpec(
      http(
        '  headers:\n    Authorization: Bearer ${API_TOKEN}\n    X-Api-Key: "${API_KEY}"\n    Accept: application/json\n',
      ),
      FILE,
    );
    expect(spec.source).toMatchObject({
      headers: { Authorization: 'Bearer ${API_TOKEN}', 'X-Api-Key': '${API_KEY}' },
    });
  });

  it('rejects literal credentials in headers and query, without repeating them', () => {
    for (const [block, path, line] of [
      [
        '  headers:\n    Authorization: Bearer s3cr3t-value\n',
        'source.headers.Authorization',
        'Authorization',
      ],
      ['  headers:\n    X-Auth-Token: s3cr3t-value\n', 'source.headers.X-Auth-Token', 'X-Auth-Token'],
      ['  headers:\n    Api-Key: s3cr3t-value ${PART}\n', 'source.headers.Api-Key', 'Api-Key'],
      ['  query: { api_key: s3cr3t-value }\n', 'source.query.api_key', 'query'],
    ] as const) {
      const text = http(block);
      const issue = issueAt(text, path, line);
      expect(issue.message).toMatch(/use an environment variable reference such as "\$\{ENV_NAME\}"/);
      expect(JSON.stringify(issuesOf(text))).not.toContain('s3cr3t');
    }
  });

  it('wants an absolute http(s) URL without a password in it', () => {
    const relative = withSource('  type: http\n  url: /items\n');
    expect(issueAt(relative, 'source.url', 'url:').message).toBe(
      'must be an absolute http:// or https:// URL',
    );
    const withPassword = withSource('  type: http\n  url: https://bob:s3cr3t@api.example.com/items\n');
    expect(issueAt(withPassword, 'source.url', 'url:').message).toMatch(
      /must not contain a user name or password/,
    );
    expect(JSON.stringify(issuesOf(withPassword))).not.toContain('s3cr3t');
  });

  it('checks pagination by its type', () => {
    const badType = http('  pagination: { type: offset }\n');
    expect(issueAt(badType, 'source.pagination.type', 'pagination').message).toBe(
      'must be one of page, cursor, none; got "offset"',
    );
    const noPath = http('  pagination: { type: cursor, cursorParam: after }\n');
    expect(issueAt(noPath, 'source.pagination.cursorPath', 'pagination').message).toBe('is required (text)');
    const method = http('  method: PUT\n');
    expect(issueAt(method, 'source.method', 'method').message).toBe('must be one of GET, POST; got "PUT"');
  });
});

describe('postgres and mysql sources', () => {
  const sql = (type: string, lines: string): string => withSource(`  type: ${type}\n${lines}`);

  it('wants the NAME of an env var, and never echoes a URL written instead', () => {
    const text = sql(
      'postgres',
      '  urlEnv: postgres://app:s3cr3t@db/app\n  table: orders\n  cursorColumn: updated_at\n',
    );
    const issue = issueAt(text, 'source.urlEnv', 'urlEnv');
    expect(issue.message).toMatch(/must be the NAME of an environment variable .* not the URL itself/);
    expect(JSON.stringify(issuesOf(text))).not.toContain('s3cr3t');
    const lower = sql('mysql', '  urlEnv: shop_db\n  table: orders\n  cursorColumn: updated_at\n');
    expect(issueAt(lower, 'source.urlEnv', 'urlEnv').message).toMatch(
      /must be an environment variable name: upper-case letters, digits and _ .*got "shop_db"/,
    );
  });

  it('wants exactly one of table and query', () => {
    const neither = sql('postgres', '  urlEnv: DB_URL\n  cursorColumn: updated_at\n');
    expect(issueAt(neither, 'source', 'source:').message).toBe(
      'needs exactly one of table (a table name) or query (a SELECT statement)',
    );
    const both = sql(
      'mysql',
      '  urlEnv: DB_URL\n  table: t\n  query: SELECT 1\n  cursorColumn: updated_at\n',
    );
    expect(issueAt(both, 'source.query', 'query').message).toMatch(/exactly one of table/);
  });

  it('wants a cursor column and plain identifiers', () => {
    // Issue 25: a table pages by its keyColumn unless told otherwise; without either there is no cursor.
    const required =
      'is required unless the source reads a table with a keyColumn (it then defaults to keyColumn)';
    const noCursor = sql('postgres', '  urlEnv: DB_URL\n  table: orders\n');
    expect(issueAt(noCursor, 'source.cursorColumn', 'source:').message).toBe(required);
    const queryWithKey = sql('mysql', '  urlEnv: DB_URL\n  query: SELECT * FROM orders\n  keyColumn: id\n');
    expect(issueAt(queryWithKey, 'source.cursorColumn', 'source:').message).toBe(required);
    const tableWithKey = parseJobSpec(
      sql('postgres', '  urlEnv: DB_URL\n  table: orders\n  keyColumn: id\n'),
      FILE,
    );
    expect(tableWithKey.source).toMatchObject({ table: 'orders', keyColumn: 'id', cursorColumn: 'id' });
    // An incremental cursor is the paging column too: paging by the key would save a key
    // as the cursor, and an edited row (an old key) would never be read again.
    const byUpdate = parseJobSpec(
      sql('postgres', '  urlEnv: DB_URL\n  table: orders\n  keyColumn: id\n') +
        'incremental: { cursor: updated_at }\n',
      FILE,
    );
    expect(byUpdate.source).toMatchObject({ keyColumn: 'id', cursorColumn: 'updated_at' });
    expect(byUpdate.incremental).toEqual({ cursor: 'updated_at' });
    const injected = sql('postgres', '  urlEnv: DB_URL\n  table: orders; drop table x\n  cursorColumn: id\n');
    expect(issueAt(injected, 'source.table', 'table').message).toMatch(/must be a table or column name/);
  });
});

describe('worksheet source and sinks', () => {
  it('checks filter operators and the field list', () => {
    const text = withSource(
      '  type: worksheet\n  worksheet: contacts\n  fields: []\n  filter:\n    type: group\n    logic: AND\n    children:\n' +
        '      - { type: condition, field: status, operator: gte, value: 1 }\n',
    );
    const operator = issueAt(text, 'source.filter.children[0].operator', 'operator: gte');
    expect(operator.message).toMatch(/^must be one of eq, ne, .*; got "gte"/);
    expect(issueAt(text, 'source.fields', 'fields: []').message).toBe('must list at least one field');
  });

  it('checks the sink by its type and wants the upsert key mapped', () => {
    const pull = (sink: string): string =>
      `name: sync\nsource: { type: worksheet, worksheet: orders }\nsink: ${sink}\nfields: { order_no: order_no }\n`;
    expect(issueAt(pull('{ type: mysql, path: x }'), 'sink.type', 'sink:').message).toBe(
      'must be one of postgres, csv, ndjson; got "mysql"',
    );
    expect(
      issueAt(pull('{ type: postgres, urlEnv: DB_URL, table: orders }'), 'sink.key', 'sink:').message,
    ).toBe('is required (text)');
    expect(
      issueAt(pull('{ type: postgres, urlEnv: DB_URL, table: orders, key: id }'), 'sink.key', 'sink:')
        .message,
    ).toMatch(/must be one of the mapped fields \(order_no\)/);
    const spec = parseJobSpec(pull('{ type: csv, path: out.csv, delimiter: ";" }'), FILE);
    expect(spec.sink).toEqual({ type: 'csv', path: 'out.csv', delimiter: ';' });
    expect(spec.target).toBeUndefined();
  });
});
