import { ConfigError } from '../ground/errors.ts';
import type { Credentials } from './auth.ts';

/**
 * Credentials from environment variables under a prefix: `ROWBRIDGE_` for the main
 * platform, another prefix (`CRM_` → CRM_APPKEY, CRM_SIGN, CRM_TOKEN, CRM_APPID,
 * CRM_OAUTH_*, CRM_API_URL) for a second application. App key + sign wins over OAuth,
 * OAuth over a personal token. The error names the variables to set, never values.
 */
export function credentialsFromEnv(
  env: NodeJS.ProcessEnv,
  prefix = 'ROWBRIDGE_',
): { credentials: Credentials; apiUrl: string | undefined } {
  const get = (name: string) => {
    const value = env[`${prefix}${name}`];
    return value === undefined || value === '' ? undefined : value.trim();
  };
  const apiUrl = get('API_URL');
  const appKey = get('APPKEY');
  const sign = get('SIGN');
  if (appKey !== undefined || sign !== undefined) {
    if (appKey === undefined || sign === undefined) {
      throw new ConfigError(`set both ${prefix}APPKEY and ${prefix}SIGN (app key + sign authentication)`);
    }
    return { credentials: { kind: 'appkey', appKey, sign }, apiUrl };
  }
  const appId = get('APPID');
  const refreshToken = get('OAUTH_REFRESH_TOKEN');
  if (refreshToken !== undefined) {
    const tokenUrl = get('OAUTH_TOKEN_URL');
    const clientId = get('OAUTH_CLIENT_ID');
    const clientSecret = get('OAUTH_CLIENT_SECRET');
    const missing = [
      tokenUrl === undefined ? `${prefix}OAUTH_TOKEN_URL` : '',
      clientId === undefined ? `${prefix}OAUTH_CLIENT_ID` : '',
      clientSecret === undefined ? `${prefix}OAUTH_CLIENT_SECRET` : '',
    ].filter(Boolean);
    if (tokenUrl === undefined || clientId === undefined || clientSecret === undefined) {
      throw new ConfigError(`OAuth needs ${missing.join(', ')} besides ${prefix}OAUTH_REFRESH_TOKEN`);
    }
    return {
      credentials: {
        kind: 'oauth',
        tokenUrl,
        clientId,
        clientSecret,
        refreshToken,
        ...(appId ? { appId } : {}),
      },
      apiUrl,
    };
  }
  const token = get('TOKEN');
  if (token !== undefined)
    return { credentials: { kind: 'token', token, ...(appId ? { appId } : {}) }, apiUrl };
  throw new ConfigError(
    `no platform credentials: set ${prefix}APPKEY and ${prefix}SIGN, or ${prefix}TOKEN (with ${prefix}APPID), ` +
      `or ${prefix}OAUTH_TOKEN_URL, ${prefix}OAUTH_CLIENT_ID, ${prefix}OAUTH_CLIENT_SECRET and ${prefix}OAUTH_REFRESH_TOKEN`,
  );
}
