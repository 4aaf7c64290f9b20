import { describe, expect, it } from 'vitest';
import { resolveBaseUrl } from '../../../src/api/transport.ts';

describe('resolveBaseUrl', () => {
  it('keeps a plain base, drops a trailing /v3 and slashes, and builds a private deployment’s /api', () => {
    expect(resolveBaseUrl({ baseUrl: 'https://api.example.com/' })).toBe('https://api.example.com');
    expect(resolveBaseUrl({ baseUrl: 'https://api.example.com/v3/' })).toBe('https://api.example.com');
    expect(resolveBaseUrl({ baseUrl: 'http://10.0.0.5:8880/api' })).toBe('http://10.0.0.5:8880/api');
    expect(resolveBaseUrl({ privateHost: 'http://10.0.0.5:8880/' })).toBe('http://10.0.0.5:8880/api');
  });

  it('refuses credentials, a query string or a fragment without repeating them', () => {
    const refused = [
      'https://user:SEKRET1@api.example.com',
      'https://api.example.com/api?token=SEKRET2',
      'https://api.example.com/?sign=SEKRET3&x=1',
      'https://api.example.com/api#SEKRET4',
    ];
    for (const baseUrl of refused) {
      let message = '';
      try {
        resolveBaseUrl({ baseUrl });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, baseUrl).toMatch(/^API base URL must not carry/);
      expect(message).not.toMatch(/SEKRET/);
    }
  });

  it('says what is missing or malformed', () => {
    expect(() => resolveBaseUrl({ baseUrl: '' })).toThrow(/not set \(ROWBRIDGE_API_URL\)/);
    expect(() => resolveBaseUrl({ baseUrl: 'api.example.com' })).toThrow(/not a URL/);
    expect(() => resolveBaseUrl({ baseUrl: 'ftp://api.example.com' })).toThrow(/must be http or https/);
  });
});
