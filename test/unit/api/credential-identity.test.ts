import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createAuth, credentialIdentity } from '../../../src/api/auth.ts';
import type { Credentials } from '../../../src/api/auth.ts';
import type { Transport } from '../../../src/api/transport.ts';

/** A transport that fails the test if anything is sent: the identity needs no request. */
const noTransport: Transport = {
  send: () => Promise.reject(new Error('the identity must not send a request')),
  close: () => Promise.resolve(),
} as unknown as Transport;

const oauth: Credentials = {
  kind: 'oauth',
  tokenUrl: 'https://auth.example.test/token',
  clientId: 'client-1',
  clientSecret: 'secret-value-1',
  refreshToken: 'refresh-value-1',
  appId: 'app-1',
};

describe('credentialIdentity (the budget key of a credential)', () => {
  /** The budget key every deployed version has used: a new one would split a credential's budget. */
  const keyOf = (kind: string, ...parts: string[]) =>
    `${kind}:${createHash('sha256')
      .update([kind, ...parts].join('\0'))
      .digest('hex')
      .slice(0, 16)}`;

  it.each<[string, Credentials, string]>([
    [
      'appkey',
      { kind: 'appkey', appKey: 'key-value-1', sign: 'sign-value-1' },
      keyOf('appkey', 'key-value-1'),
    ],
    [
      'token',
      { kind: 'token', token: 'token-value-1', appId: 'app-1' },
      keyOf('token', 'token-value-1', 'app-1'),
    ],
    ['oauth', oauth, keyOf('oauth', 'client-1', 'app-1')],
  ])('is the one the client authenticates with (%s), with no secret in it', (_kind, credentials, key) => {
    const identity = credentialIdentity(credentials);
    expect(identity).toBe(key);
    expect(createAuth(credentials, noTransport).identity).toBe(key);
    for (const secret of [
      'key-value-1',
      'sign-value-1',
      'token-value-1',
      'secret-value-1',
      'refresh-value-1',
    ])
      expect(identity).not.toContain(secret);
  });

  it('is shared by processes holding the same credential and differs for another one', () => {
    const rotated = { ...oauth, refreshToken: 'refresh-value-2', accessToken: 'access-2' };
    expect(credentialIdentity(rotated)).toBe(credentialIdentity(oauth));
    expect(credentialIdentity({ ...oauth, clientId: 'client-2' })).not.toBe(credentialIdentity(oauth));
    expect(credentialIdentity({ kind: 'appkey', appKey: 'key-value-2', sign: 's' })).not.toBe(
      credentialIdentity({ kind: 'appkey', appKey: 'key-value-1', sign: 's' }),
    );
  });
});
