/**
 * A run's spec goes to Redis with credentials written into URLs masked, and comes back
 * whole from the job file; a file that no longer holds the URL fails the run, naming it.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { MASK } from '../../../../src/ground/mask-secrets.ts';
import { maskSpecText, restoreSpecText } from '../../../../src/sync/prepare/snapshot-credentials.ts';

const SPEC = `name: orders
source:
  type: http
  url: https://api.example.com/orders?api_key=SEKRET123&page=1
  headers: { Authorization: "Bearer \${ORDERS_AUTH}" }
target: { worksheet: orders, mode: upsert, key: code }
fields: { code: code }
`;

describe('run snapshot credentials', () => {
  it('stores a spec without credentials as written', () => {
    const plain = SPEC.replace('api_key=SEKRET123&', '');
    expect(maskSpecText(plain)).toEqual({ text: plain, masked: [] });
  });

  it('masks the credential of a URL and takes it back from the file', () => {
    const stored = maskSpecText(SPEC);
    expect(stored.text).not.toContain('SEKRET123');
    expect(stored.text).toContain(`api_key=${MASK}&page=1`);
    expect(stored.masked).toEqual([['source', 'url']]);
    const edited = SPEC.replace('mode: upsert', 'mode: append');
    const restored = parse(restoreSpecText(stored, { file: 'orders.yaml', text: edited }, 'orders.yaml'));
    // The run keeps the spec it started with, but for the credential, which the file gives.
    expect(restored).toMatchObject({
      source: { url: 'https://api.example.com/orders?api_key=SEKRET123&page=1' },
      target: { mode: 'upsert' },
    });
  });

  it('fails, naming the field and not the credential, when the file lost the URL', () => {
    const stored = maskSpecText(SPEC);
    for (const current of [
      undefined,
      { file: 'orders.yaml', text: SPEC.replace('/orders?', '/v2/orders?') },
    ]) {
      let error: unknown;
      try {
        restoreSpecText(stored, current, 'orders.yaml');
      } catch (err) {
        error = err;
      }
      expect(error).toMatchObject({ name: 'JobSpecError' });
      expect((error as Error).message).toContain('source.url: changed since this run started');
      expect((error as Error).message).not.toContain('SEKRET123');
    }
  });
});
