/**
 * `check JOB` for a two-way job whose other side is a worksheet: that worksheet is read
 * through the client of its own `credentialsEnvPrefix` (the rest of `check` talks to the
 * target's app), and the fields the job maps are checked on both worksheets.
 */
import { loadSettings } from '../../config/settings.ts';
import { credentialsFromEnv } from '../api/credentials-from-env.ts';
import { createPlatformClient } from '../api/create-platform-client.ts';
import type { PlatformClient } from '../api/create-platform-client.ts';
import { resolveBaseUrl } from '../api/transport.ts';
import { checkTwoWayWorksheet } from '../sync/check/check-two-way-worksheet.ts';
import type { CheckStep } from '../sync/check/check-setup.ts';
import type { JobSpec } from '../sync/job-spec/job-spec-schema.ts';
import type { CliIo } from './io.ts';

/** A client for the credentials of `prefix`, with a doctor's short timeouts (as check.ts makes its own). */
function clientOf(io: CliIo, prefix: string): PlatformClient {
  const settings = loadSettings(io.env);
  const { credentials, apiUrl } = credentialsFromEnv(io.env, prefix);
  const baseUrl = resolveBaseUrl({
    baseUrl: apiUrl ?? (prefix === 'ROWBRIDGE_' ? settings.apiUrl : undefined) ?? '',
  });
  const timeZone = io.env[`${prefix}PLATFORM_TIMEZONE`]?.trim() || settings.platformTimezone;
  return createPlatformClient({
    baseUrl,
    credentials,
    headerPrefix: settings.headerPrefix,
    connectTimeoutMs: 5_000,
    headersTimeoutMs: 15_000,
    retry: { retries: 1, maxRetryTimeMs: 10_000 },
    organisation: { timeZone, orgId: settings.orgId },
  });
}

/** The `source worksheet` step of a two-way job with a worksheet source; none for other jobs. */
export async function twoWayWorksheetSteps(io: CliIo, spec: JobSpec, file: string): Promise<CheckStep[]> {
  if (spec.target?.mode !== 'two-way' || spec.source.type !== 'worksheet') return [];
  const prefix = spec.source.credentialsEnvPrefix ?? 'ROWBRIDGE_';
  const opened: PlatformClient[] = [];
  try {
    const target = clientOf(io, spec.target.app?.credentialsEnvPrefix ?? 'ROWBRIDGE_');
    opened.push(target);
    const source = clientOf(io, prefix);
    opened.push(source);
    return await checkTwoWayWorksheet(spec, file, { target, source, prefix });
  } catch (err) {
    return [
      { name: 'source worksheet', ok: false, detail: err instanceof Error ? err.message : String(err) },
    ];
  } finally {
    for (const client of opened) {
      await client.close().catch(() => undefined);
      await client.limiter.stop().catch(() => undefined);
    }
  }
}
