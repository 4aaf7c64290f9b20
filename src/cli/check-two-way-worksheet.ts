/**
 * `check JOB` for a two-way job whose other side is a worksheet: that worksheet is read
 * through the client of its own `credentialsEnvPrefix` (the rest of `check` talks to the
 * target's app), and the fields the job maps are checked on both worksheets.
 */
import type { PlatformClient } from '../api/create-platform-client.ts';
import { checkTwoWayWorksheet } from '../sync/check/check-two-way-worksheet.ts';
import type { CheckStep } from '../sync/check/check-setup.ts';
import type { JobSpec } from '../sync/job-spec/job-spec-schema.ts';
import { doctorClient } from './doctor-client.ts';
import type { CliIo } from './io.ts';

/** A client for the credentials of `prefix`, with a doctor's short timeouts. */
const clientOf = (io: CliIo, prefix: string): PlatformClient => doctorClient(io.env, prefix).client;

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
