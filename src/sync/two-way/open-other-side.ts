/**
 * The side a two-way job keeps its worksheet equal with: a PostgreSQL or MySQL/MariaDB
 * table (table-side.ts), or another worksheet (worksheet-other-side.ts), opened through
 * the client of its `credentialsEnvPrefix`. Both answer the same {@link TableSide}.
 */
import type { PlatformClient } from '../../api/create-platform-client.ts';
import { ConfigError } from '../../ground/errors.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import { openTableSide } from './table-side.ts';
import type { TableSide } from './table-side-types.ts';
import { openWorksheetOtherSide, WORKSHEET_UPDATED_AT } from './worksheet-other-side.ts';

/** The other side, and the column of its records holding when each last changed (if any). */
export interface OtherSide {
  side: TableSide;
  updatedAtColumn: string | undefined;
}

/** Opens the job's other side; refuses a source type two-way cannot write. */
export async function openOtherSide(
  spec: JobSpec,
  file: string,
  env: NodeJS.ProcessEnv,
  clientFor: ((credentialsEnvPrefix?: string) => PlatformClient) | undefined,
): Promise<OtherSide> {
  const source = spec.source;
  if (source.type === 'postgres' || source.type === 'mysql')
    return { side: await openTableSide(source, env), updatedAtColumn: source.updatedAtColumn };
  if (source.type === 'worksheet') {
    if (clientFor === undefined)
      throw new ConfigError(
        `${file}: a two-way worksheet source needs a platform client for its credentials`,
      );
    const side = await openWorksheetOtherSide({
      spec: { ...spec, source },
      file,
      client: clientFor(source.credentialsEnvPrefix),
    });
    return { side, updatedAtColumn: WORKSHEET_UPDATED_AT };
  }
  throw new ConfigError(
    `${file}: source.type ${source.type}: two-way runs a postgres or mysql table, or a worksheet (docs/two-way.md)`,
  );
}
