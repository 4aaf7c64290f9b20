/**
 * The job page's second line of defence (issue 13): whatever a job file holds that the
 * job-spec schema let through, the page shows `${ENV}` references by name and masks
 * credentials written as values, in headers, query parameters, URLs and nested options,
 * without hiding the mapping a person needs to read.
 */
import { describe, expect, it } from 'vitest';
import { MASK, maskSecrets, maskedSpecYaml } from '../../src/ground/mask-secrets.ts';

describe('job specs on the job page', () => {
  it('masks credentials written into headers, query maps and URLs', () => {
    const masked = maskSecrets({
      source: {
        type: 'http',
        url: 'https://user:hunter2@api.example.com/v1/items?access_token=abc123&page=1&apiKey=${ITEMS_KEY}',
        headers: {
          Authorization: 'Bearer sk-live-0123456789',
          'X-Api-Key': 'k-9876543210',
          Cookie: 'session=s3cr3t',
          Accept: 'application/json',
        },
        query: { client_secret: 'cs-42', updated_since: '${SINCE}' },
      },
    }) as { source: { url: string; headers: Record<string, string>; query: Record<string, string> } };
    expect(masked.source.url).toBe(
      `https://user:${MASK}@api.example.com/v1/items?access_token=${MASK}&page=1&apiKey=\${ITEMS_KEY}`,
    );
    expect(masked.source.headers).toEqual({
      Authorization: MASK,
      'X-Api-Key': MASK,
      Cookie: MASK,
      Accept: 'application/json',
    });
    expect(masked.source.query).toEqual({ client_secret: MASK, updated_since: '${SINCE}' });
  });

  it('shows references by name, with their auth scheme, and leaves the mapping readable', () => {
    const yaml = maskedSpecYaml({
      source: { headers: { Authorization: 'Bearer ${HELPDESK_TOKEN}', 'X-Token': '${A}${B}' } },
      fields: { assignee: 'Owner', designation: { from: 'Title' }, sign_up: 'Signed up' },
    });
    expect(yaml).toContain('Authorization: Bearer ${HELPDESK_TOKEN}');
    expect(yaml).toContain('X-Token: ${A}${B}');
    expect(yaml).toContain('assignee: Owner');
    expect(yaml).toContain('from: Title');
    expect(yaml).toContain('sign_up: Signed up');
    expect(yaml).not.toContain(MASK);
    // A reference mixed with a literal still carries the literal: masked whole.
    expect(maskSecrets({ Authorization: 'Bearer ${T} extra-literal' })).toEqual({ Authorization: MASK });
  });
});
