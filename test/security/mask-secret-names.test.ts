/**
 * Attack (or accident): credentials under names the masking did not know (`pass`,
 * `passphrase`, `license_key`, an `X-Appkey` header, OAuth's `code`, an `otp`, a custom
 * header) and a password inside a SQL `query:` were shown as written on the dashboard's
 * job page, and the job-spec check let such literal credentials into the spec.
 */
import { describe, expect, it } from 'vitest';
import { MASK, maskedSpecYaml } from '../../src/ground/mask-secrets.ts';
import { JobSpecError } from '../../src/sync/job-spec/job-spec-error.ts';
import { parseJobSpec } from '../../src/sync/job-spec/load-job-spec.ts';

const SECRETS = [
  'hunter2-pass',
  'open-sesame-phrase',
  'LIC-4242-4242',
  'appkey-9f8e7d',
  'oauth-code-77',
  '864209',
  'custom-cred-31',
  'db-pw-5150',
  'url-pw-2112',
];

describe('the job page masks credentials under every name the spec check knows', () => {
  const yaml = maskedSpecYaml({
    name: 'leaky',
    source: {
      type: 'http',
      url: 'https://api.example.com/v1/items',
      headers: {
        'X-Appkey': 'appkey-9f8e7d',
        'X-Helpdesk-Tenant': 'custom-cred-31',
        Accept: 'application/json',
        'X-Static': '${STATIC_VALUE}',
      },
      query: {
        pass: 'hunter2-pass',
        passphrase: 'open-sesame-phrase',
        license_key: 'LIC-4242-4242',
        code: 'oauth-code-77',
        otp: '864209',
        page_size: '50',
      },
    },
    lookups: {
      type: 'postgres',
      query:
        "SELECT * FROM dblink('host=db user=etl password=db-pw-5150 dbname=crm', 'select id from t') AS t(id int)" +
        " UNION SELECT * FROM remote('postgres://etl:url-pw-2112@db2/crm')",
    },
    fields: { code: 'Code', pass_rate: 'Pass rate' },
  });

  it('shows none of the credentials', () => {
    for (const secret of SECRETS) expect(yaml).not.toContain(secret);
    expect(yaml).toContain(`X-Appkey: ${MASK}`);
    expect(yaml).toContain(`X-Helpdesk-Tenant: ${MASK}`);
    expect(yaml).toContain(`license_key: ${MASK}`);
    expect(yaml).toContain(`password=${MASK}`);
    expect(yaml).toContain(`postgres://etl:${MASK}@db2/crm`);
  });

  it('keeps what a person needs to read: plain headers, references, other parameters, the SQL, the mapping', () => {
    expect(yaml).toContain('Accept: application/json');
    expect(yaml).toContain('X-Static: ${STATIC_VALUE}');
    expect(yaml).toContain('page_size: "50"');
    expect(yaml).toContain('SELECT * FROM dblink(');
    expect(yaml).toContain('code: Code');
    expect(yaml).toContain('pass_rate: Pass rate');
  });
});

describe('the job-spec check refuses the same names holding literals', () => {
  const spec = (query: string) =>
    `name: leaky\nsource:\n  type: http\n  url: https://api.example.com/v1/items\n  query: { ${query} }\n` +
    `target: { worksheet: items, mode: upsert, key: code }\nfields: { code: code }\n`;

  it.each([
    ['pass', 'hunter2-pass'],
    ['passphrase', 'open-sesame-phrase'],
    ['license_key', 'LIC-4242-4242'],
    ['appkey', 'appkey-9f8e7d'],
    ['code', 'oauth-code-77'],
    ['otp', '864209'],
  ])('source.query.%s with a literal value is refused without repeating it', (name, value) => {
    let error: unknown;
    try {
      parseJobSpec(spec(`${name}: '${value}'`), 'jobs/leaky.yaml');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(JobSpecError);
    const issues = (error as JobSpecError).issues;
    expect(issues.map((i) => i.path)).toContain(`source.query.${name}`);
    expect(JSON.stringify(issues)).toMatch(/environment variable reference/);
    expect(JSON.stringify(issues)).not.toContain(value);
    // The same name given as a reference is fine.
    expect(() =>
      parseJobSpec(spec(`${name}: '\${LEAKY_${name.toUpperCase()}}'`), 'jobs/leaky.yaml'),
    ).not.toThrow();
  });
});
