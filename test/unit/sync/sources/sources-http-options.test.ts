import { describe, expect, it } from 'vitest';
import { JobSpecError } from '../../../../src/sync/job-spec/job-spec-error.ts';
import { parseJobSpec } from '../../../../src/sync/job-spec/load-job-spec.ts';
import { HTTP_LIMIT_DEFAULTS, httpLimits } from '../../../../src/sync/sources/http-limits.ts';

const FILE = 'jobs/api.yaml';
const job = (extra: string) =>
  `name: api\nsource: { type: http, url: "https://api.example.com/items"${extra} }\ntarget: { worksheet: ws }\nfields: { a: A }\n`;

function issuesOf(text: string) {
  try {
    parseJobSpec(text, FILE);
  } catch (error) {
    if (error instanceof JobSpecError) return error.issues.map((i) => [i.path, i.line, i.message]);
    throw error;
  }
  throw new Error('expected the job spec to be rejected');
}

describe('http source limits in a job spec', () => {
  it('keeps specs without them valid, with the documented defaults', () => {
    const spec = parseJobSpec(job(''), FILE);
    expect(spec.source.type === 'http' && httpLimits(spec.source)).toEqual({
      connectTimeoutMs: 10_000,
      headersTimeoutMs: 60_000,
      bodyTimeoutMs: 60_000,
      maxResponseBytes: 256 * 1024 * 1024,
    });
    expect(HTTP_LIMIT_DEFAULTS.maxResponseBytes).toBe(268_435_456);
  });

  it('takes each one from the spec', () => {
    const spec = parseJobSpec(
      job(', connectTimeoutMs: 1500, headersTimeoutMs: 2500, bodyTimeoutMs: 3500, maxResponseBytes: 1048576'),
      FILE,
    );
    expect(spec.source.type === 'http' && httpLimits(spec.source)).toEqual({
      connectTimeoutMs: 1500,
      headersTimeoutMs: 2500,
      bodyTimeoutMs: 3500,
      maxResponseBytes: 1_048_576,
    });
  });

  it('names the field, the line and the allowed range of a bad value', () => {
    expect(issuesOf(job(', bodyTimeoutMs: 0, maxResponseBytes: "big"'))).toEqual([
      ['source.bodyTimeoutMs', 2, 'must be a whole number from 1 to 3600000; got 0'],
      ['source.maxResponseBytes', 2, 'must be a whole number from 1 to 8589934592; got "big"'],
    ]);
  });
});
