/**
 * The platform client `check` talks through, for the app of one credentials prefix: a
 * doctor answers in seconds, so one retry and short timeouts. Also what it connected with,
 * for the report.
 */
import { loadSettings } from '../../config/settings.ts';
import type { Credentials } from '../api/auth.ts';
import { credentialsFromEnv } from '../api/credentials-from-env.ts';
import { createPlatformClient } from '../api/create-platform-client.ts';
import type { PlatformClient } from '../api/create-platform-client.ts';
import { resolveBaseUrl } from '../api/transport.ts';

export interface DoctorClient {
  client: PlatformClient;
  baseUrl: string;
  credentials: Credentials;
  timeZone: string;
}

export function doctorClient(env: NodeJS.ProcessEnv, prefix: string): DoctorClient {
  const settings = loadSettings(env);
  const { credentials, apiUrl } = credentialsFromEnv(env, prefix);
  const baseUrl = resolveBaseUrl({
    baseUrl: apiUrl ?? (prefix === 'ROWBRIDGE_' ? settings.apiUrl : undefined) ?? '',
  });
  const timeZone = env[`${prefix}PLATFORM_TIMEZONE`]?.trim() || settings.platformTimezone;
  const client = createPlatformClient({
    baseUrl,
    credentials,
    headerPrefix: settings.headerPrefix,
    connectTimeoutMs: 5_000,
    headersTimeoutMs: 15_000,
    retry: { retries: 1, maxRetryTimeMs: 10_000 },
    organisation: { timeZone, orgId: settings.orgId },
  });
  return { client, baseUrl, credentials, timeZone };
}
