import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadSettings, secretVariables } from '../../../config/settings.ts';
import { credentialsFromEnv } from '../../../src/api/credentials-from-env.ts';
import { ConfigError } from '../../../src/ground/errors.ts';
import { createLogger } from '../../../src/ground/logger.ts';

describe('settings', () => {
  it('applies defaults and reads the environment', () => {
    const s = loadSettings({ ROWBRIDGE_API_URL: 'http://x', ROWBRIDGE_RATE: '4', ROWBRIDGE_SIGN: 's' });
    expect(s.apiUrl).toBe('http://x');
    expect(s.initialRate).toBe(4);
    expect(s.maxRate).toBe(50);
    expect(s.headerPrefix).toBe('HAP-');
    expect(s.redisUrl).toBe('redis://127.0.0.1:6379');
  });

  it('names the variable and what is allowed on a bad value', () => {
    expect(() => loadSettings({ ROWBRIDGE_MAX_CONCURRENT: '2.5' })).toThrow(
      /ROWBRIDGE_MAX_CONCURRENT must be a whole number/,
    );
    expect(() => loadSettings({ ROWBRIDGE_LOG_LEVEL: 'loud' })).toThrow(/one of fatal, error/);
  });

  it('marks the credentials as secret', () => {
    expect(secretVariables()).toEqual(
      expect.arrayContaining([
        'ROWBRIDGE_SIGN',
        'ROWBRIDGE_TOKEN',
        'ROWBRIDGE_OAUTH_CLIENT_SECRET',
        'ROWBRIDGE_OAUTH_REFRESH_TOKEN',
      ]),
    );
  });
});

describe('credentials from the environment', () => {
  it('prefers app key + sign, then OAuth, then a personal token', () => {
    expect(
      credentialsFromEnv({ ROWBRIDGE_APPKEY: 'k', ROWBRIDGE_SIGN: 's', ROWBRIDGE_TOKEN: 't' }).credentials,
    ).toEqual({
      kind: 'appkey',
      appKey: 'k',
      sign: 's',
    });
    expect(
      credentialsFromEnv({
        ROWBRIDGE_OAUTH_REFRESH_TOKEN: 'r',
        ROWBRIDGE_OAUTH_TOKEN_URL: 'http://t',
        ROWBRIDGE_OAUTH_CLIENT_ID: 'c',
        ROWBRIDGE_OAUTH_CLIENT_SECRET: 'cs',
        ROWBRIDGE_APPID: 'a',
        ROWBRIDGE_TOKEN: 't',
      }).credentials.kind,
    ).toBe('oauth');
    expect(credentialsFromEnv({ CRM_TOKEN: 't', CRM_APPID: 'a', CRM_API_URL: 'http://crm' }, 'CRM_')).toEqual(
      {
        credentials: { kind: 'token', token: 't', appId: 'a' },
        apiUrl: 'http://crm',
      },
    );
  });

  it('says which variables are missing, never their values', () => {
    expect(() => credentialsFromEnv({ ROWBRIDGE_APPKEY: 'key-value' })).toThrow(
      /ROWBRIDGE_APPKEY and ROWBRIDGE_SIGN/,
    );
    expect(() => credentialsFromEnv({ ROWBRIDGE_OAUTH_REFRESH_TOKEN: 'secret-refresh' })).toThrow(
      ConfigError,
    );
    try {
      credentialsFromEnv({ ROWBRIDGE_OAUTH_REFRESH_TOKEN: 'secret-refresh' });
    } catch (err) {
      expect((err as Error).message).toContain('ROWBRIDGE_OAUTH_CLIENT_SECRET');
      expect((err as Error).message).not.toContain('secret-refresh');
    }
    expect(() => credentialsFromEnv({})).toThrow(/no platform credentials/);
  });
});

describe('logger', () => {
  it('redacts credential headers and secret settings', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const log = createLogger({ destination: sink, redactHeaders: ['X-HAP-Sign'] });
    log.info(
      { headers: { authorization: 'Bearer tok-123', 'APP-Sign': 'sign-456', 'X-HAP-Sign': 'sign-789' } },
      'req',
    );
    log
      .child({ job: 'orders' })
      .info({ config: { sign: 'sign-000' }, oauth: { clientSecret: 'cs-1' } }, 'cfg');
    const out = lines.join('');
    for (const secret of ['tok-123', 'sign-456', 'sign-789', 'sign-000', 'cs-1'])
      expect(out).not.toContain(secret);
    expect(out).toContain('[redacted]');
    expect(out).toContain('"job":"orders"');
  });
});
