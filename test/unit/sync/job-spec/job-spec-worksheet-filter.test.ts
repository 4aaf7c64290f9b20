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
  it('refuses a filter deeper than two levels, naming the place', () => {
    const err = rejection(
      pull(
        '{ type: group, logic: AND, children: [{ type: group, logic: OR, children: [{ type: group, logic: AND, children: [{ type: condition, field: note, operator: eq, value: x }] }] }] }',
      ),
    );
    expect(err.message).toMatch(
      /jobs\/export\.yaml:5:\d+ source\.filter\.children\[0\]: is nested deeper than the two levels the platform reads \(group, group, condition\)/,
    );
  });

  it('refuses a group that mixes groups and conditions', () => {
    const err = rejection(
      pull(
        '{ type: group, logic: AND, children: [{ type: condition, field: note, operator: eq, value: x }, { type: group, logic: OR, children: [{ type: condition, field: qty, operator: ge, value: 3 }] }] }',
      ),
    );
    expect(err.message).toMatch(
      /source\.filter: mixes groups and conditions; the children of one group must be all groups or all conditions/,
    );
  });

  it('accepts isempty and isnotempty, which every family of platform-shapes §8 lists', () => {
    expect(() =>
      parseJobSpec(
        pull('{ type: group, logic: AND, children: [{ type: condition, field: note, operator: isempty }] }'),
        'jobs/export.yaml',
      ),
    ).not.toThrow();
  });

  it('accepts two levels of groups whose children are all of one kind', () => {
    expect(() =>
      parseJobSpec(
        pull(
          '{ type: group, logic: OR, children: [{ type: group, logic: AND, children: [{ type: condition, field: a, operator: eq, value: x }, { type: condition, field: b, operator: ge, value: 3 }] }, { type: group, logic: AND, children: [{ type: condition, field: c, operator: isnotempty }] }] }',
        ),
        'jobs/export.yaml',
      ),
    ).not.toThrow();
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
