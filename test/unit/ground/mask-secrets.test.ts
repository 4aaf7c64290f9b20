/**
 * The one masking of credentials (ground/mask-secrets.ts) as URLs in messages and run
 * snapshots use it: what a person needs (host, path, other parameters) stays readable.
 */
import { describe, expect, it } from 'vitest';
import { MASK, maskUrl } from '../../../src/ground/mask-secrets.ts';
import { safeUrl } from '../../../src/sync/sources/redact.ts';

describe('maskUrl', () => {
  it('masks credential parameters under any spelling and keeps the rest', () => {
    expect(maskUrl('https://api.example.com/orders?api_key=SEKRET123&page=1')).toBe(
      `https://api.example.com/orders?api_key=${MASK}&page=1`,
    );
    for (const name of ['apiKey', 'accessKey', 'key', 'sig', 'X-Amz-Signature', 'auth', 'sessionId', 'jwt'])
      expect(maskUrl(`https://h/p?${name}=SEKRET&region=eu`)).toBe(`https://h/p?${name}=${MASK}&region=eu`);
    expect(maskUrl('https://h/p?sort_key=name&monkey=1')).toBe('https://h/p?sort_key=name&monkey=1');
  });

  it('masks a password in user info and leaves ${ENV} references as written', () => {
    expect(maskUrl('postgres://user:SEKRET789@127.0.0.1/test')).toBe(
      `postgres://user:${MASK}@127.0.0.1/test`,
    );
    expect(maskUrl('https://h/p?token=${ORDERS_TOKEN}&page=1')).toBe(
      'https://h/p?token=${ORDERS_TOKEN}&page=1',
    );
    expect(maskUrl('not a url')).toBe('not a url');
  });
});

describe('safeUrl (source messages)', () => {
  it('drops user info and the fragment, masks credential parameters, keeps the others', () => {
    expect(safeUrl('https://u:pw@api.example.com/orders?api_key=SEKRET123&page=1#top')).toBe(
      `https://api.example.com/orders?api_key=${MASK}&page=1`,
    );
    expect(safeUrl('nonsense')).toBe('<invalid url>');
  });
});
