/**
 * The settings that say which platform rowbridge talks to and with which credentials
 * (part of {@link SETTINGS} in settings.ts, which lists them first).
 */
import { text, ianaZone } from './setting-parsers.ts';
import type { Setting } from './setting-parsers.ts';

/** Address, credentials and organisation of the platform. */
export const PLATFORM_SETTINGS = {
  apiUrl: {
    env: 'ROWBRIDGE_API_URL',
    description: 'platform base URL ({host}/api for a private deployment)',
    parse: text,
  },
  appKey: { env: 'ROWBRIDGE_APPKEY', description: 'application key', secret: true, parse: text },
  sign: { env: 'ROWBRIDGE_SIGN', description: 'application sign (static secret)', secret: true, parse: text },
  token: { env: 'ROWBRIDGE_TOKEN', description: 'personal access token', secret: true, parse: text },
  appId: { env: 'ROWBRIDGE_APPID', description: 'application id sent with tokens', parse: text },
  oauthTokenUrl: { env: 'ROWBRIDGE_OAUTH_TOKEN_URL', description: 'OAuth 2.0 token endpoint', parse: text },
  oauthClientId: { env: 'ROWBRIDGE_OAUTH_CLIENT_ID', description: 'OAuth client id', parse: text },
  oauthClientSecret: {
    env: 'ROWBRIDGE_OAUTH_CLIENT_SECRET',
    description: 'OAuth client secret',
    secret: true,
    parse: text,
  },
  oauthRefreshToken: {
    env: 'ROWBRIDGE_OAUTH_REFRESH_TOKEN',
    description: 'OAuth refresh token',
    secret: true,
    parse: text,
  },
  headerPrefix: {
    env: 'ROWBRIDGE_HEADER_PREFIX',
    description: 'authentication header prefix (the public platform: HAP-)',
    default: 'HAP-',
    parse: text,
  },
  platformTimezone: {
    env: 'ROWBRIDGE_PLATFORM_TIMEZONE',
    description:
      "the organisation's time zone: zone-less platform timestamps are read in it and Date/DateTime/Time values are written as its wall clock (the public platform: Asia/Shanghai)",
    default: 'Asia/Shanghai',
    parse: ianaZone,
  },
  orgId: {
    env: 'ROWBRIDGE_ORG_ID',
    description:
      'organisation id sent as orgId with member and department lookups (needed with a personal or OAuth token)',
    parse: text,
  },
} satisfies Record<string, Setting<unknown>>;
