/**
 * A two-way job with a worksheet on the other side (issue 25): accepted as a user writes
 * it, `conflict: newest` needing no column; what would hide rows from the run's whole
 * read, or change the values' form, refused at its key.
 */
import { describe, expect, it } from 'vitest';
import { JobSpecError } from '../../../../src/sync/job-spec/job-spec-error.ts';
import { parseJobSpec } from '../../../../src/sync/job-spec/load-job-spec.ts';

const FILE = 'jobs/contacts.yaml';
const job = (source: string) => `name: contacts
source: ${source}
target: { worksheet: contacts, mode: two-way, key: email }
fields:
  email: email
  name: name
`;

function issues(text: string): string[] {
  try {
    parseJobSpec(text, FILE);
  } catch (error) {
    if (error instanceof JobSpecError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

describe('two-way with a worksheet source', () => {
  it('is accepted with its credentials prefix, and newest needs no updatedAtColumn', () => {
    const spec = parseJobSpec(
      job('{ type: worksheet, worksheet: contacts, credentialsEnvPrefix: CRM_ }'),
      FILE,
    );
    expect(spec.source).toMatchObject({ type: 'worksheet', credentialsEnvPrefix: 'CRM_' });
    expect(spec.target?.mode).toBe('two-way');
  });

  it('refuses a view, a filter, a field list and raw values, each at its key', () => {
    const found = issues(
      job(
        '{ type: worksheet, worksheet: contacts, view: v1, fields: [email], values: raw, filter: { type: condition, field: email, operator: isnotempty } }',
      ),
    );
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^source\.view: cannot be used with mode two-way: a row the run does not read/),
        expect.stringMatching(/^source\.filter: cannot be used with mode two-way/),
        expect.stringMatching(/^source\.fields: cannot be used with mode two-way/),
        expect.stringMatching(/^source\.values: must be person \(the default\) with mode two-way/),
      ]),
    );
    expect(found).toHaveLength(4);
  });

  it('still refuses a source two-way cannot write, naming the ones it can', () => {
    expect(issues(job('{ type: csv, path: ./c.csv }'))).toEqual([
      expect.stringMatching(/^source\.type: must be postgres, mysql or worksheet for mode two-way/),
    ]);
  });
});
