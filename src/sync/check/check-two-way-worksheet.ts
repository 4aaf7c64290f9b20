/**
 * `check JOB` for a two-way job whose other side is a worksheet: that worksheet reached
 * through its own credentials, the fields the job maps found on both worksheets and
 * writable where the job writes them (the run's own refusals, worksheet-other-side.ts and
 * two-way-fields.ts), and one page of its rows. Nothing is written.
 */
import type { PlatformClient } from '../../api/create-platform-client.ts';
import type { JobSpec } from '../job-spec/job-spec-schema.ts';
import { twoWayFields } from '../two-way/two-way-fields.ts';
import { openWorksheetOtherSide } from '../two-way/worksheet-other-side.ts';
import type { CheckStep } from './check-setup.ts';

/** The clients of the target's app and of the source's (`prefix`). */
export interface TwoWayWorksheetEnds {
  target: PlatformClient;
  source: PlatformClient;
  prefix: string;
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The `source worksheet` and `two-way fields` steps; none for another job. */
export async function checkTwoWayWorksheet(
  spec: JobSpec,
  file: string,
  ends: TwoWayWorksheetEnds,
): Promise<CheckStep[]> {
  const source = spec.source;
  if (spec.target?.mode !== 'two-way' || source.type !== 'worksheet') return [];
  const { prefix } = ends;
  let summary: string;
  let structureId: string;
  try {
    const structure = await ends.source.worksheets.get(source.worksheet);
    structureId = structure.id;
    summary = `${structure.name} (${structure.id}) through ${prefix}: ${structure.fields.length} fields`;
  } catch (err) {
    return [
      {
        name: 'source worksheet',
        ok: false,
        detail: `worksheet "${source.worksheet}" through ${prefix}: ${messageOf(err)}`,
      },
    ];
  }
  try {
    const page = await ends.source.rows.list(structureId, {
      pageSize: 10,
      pageIndex: 1,
      includeTotalCount: true,
    });
    const total = page.total === undefined ? '' : ` of ${page.total}`;
    summary += `; read one page: ${page.rows.length} row${page.rows.length === 1 ? '' : 's'}${total}`;
  } catch (err) {
    return [{ name: 'source worksheet', ok: false, detail: `${summary}; reading rows: ${messageOf(err)}` }];
  }
  const steps: CheckStep[] = [{ name: 'source worksheet', ok: true, detail: summary }];
  try {
    const side = await openWorksheetOtherSide({ spec: { ...spec, source }, file, client: ends.source });
    const generated = new Set([...side.columns].filter(([, c]) => c.generated).map(([name]) => name));
    const fields = twoWayFields(
      spec,
      await ends.target.worksheets.get(spec.target.worksheet),
      generated,
      file,
    );
    const both = fields.filter((f) => f.direction === 'both').length;
    steps.push({
      name: 'two-way fields',
      ok: true,
      detail: `${fields.length} fields, ${both} copied both ways, ${fields.length - both} one way`,
    });
  } catch (err) {
    steps.push({ name: 'two-way fields', ok: false, detail: messageOf(err) });
  }
  return steps;
}
