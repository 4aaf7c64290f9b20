import { describe, expect, it } from 'vitest';
import { JobSpecError } from '../../../../src/sync/job-spec/job-spec-error.ts';
import { parseJobSpec } from '../../../../src/sync/job-spec/load-job-spec.ts';

const pull = (filter: string) => `name: export
source:
  type: worksheet
  worksheet: orders
  filter: ${filter}
sink: { type: ndjson, path: ./out.ndjson }
fields:
  order_no: order_no
`;

function rejection(text: string): JobSpecError {
  try {
    parseJobSpec(text, 'jobs/export.yaml');
  } catch (error) {
    if (error instanceof JobSpecError) return error;
    throw error;
  }
  throw new Error('expected the job spec to be rejected');
}

describe('worksheet source filters', () => {
  it('refuses isempty and isnotempty, which the platform ignores on row lists, naming the place', () => {
    const err = rejection(
      pull('{ type: group, logic: AND, children: [{ type: condition, field: note, operator: isempty }] }'),
    );
    expect(err.message).toMatch(
      /jobs\/export\.yaml:5:\d+ source\.filter\.children\[0\]\.operator: isempty is ignored by the platform on row lists/,
    );
    expect(rejection(pull('{ type: condition, field: note, operator: isnotempty }')).message).toMatch(
      /source\.filter\.operator: isnotempty is ignored/,
    );
  });

  it('accepts a bare condition (it is sent inside a group) and a group', () => {
    expect(() =>
      parseJobSpec(
        pull('{ type: condition, field: status, operator: eq, value: shipped }'),
        'jobs/export.yaml',
      ),
    ).not.toThrow();
    expect(() =>
      parseJobSpec(
        pull(
          '{ type: group, logic: OR, children: [{ type: condition, field: status, operator: eq, value: a }] }',
        ),
        'jobs/export.yaml',
      ),
    ).not.toThrow();
  });
});
