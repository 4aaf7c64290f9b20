/**
 * Dead letters summarised by reason, as the platform's own Excel import reports a file:
 * one line per reason with how many rows it stopped and where the first ones are,
 * rather than a thousand lines that say the same. A reason is the message with its
 * first quoted value blanked, which is where our messages put the row's own value
 * (`amount: "12x" is not a number` and `amount: "7y" ...` are one reason; `no option
 * "Bogus"; allowed: "New", "Paid"` keeps what is allowed), under its category, field
 * and code. The same pass collects the fields, codes
 * and jobs the entries name, so the page offers them as choices: the store indexes
 * neither fields nor codes.
 */
import type { ErrorCategory } from '../../ground/errors.ts';
import type { DeadLetterEntry } from '../../sync/state/dead-letter-entry.ts';
import { positionLabel } from '../../sync/state/dead-letter-format.ts';
import type { DeadLetterStore } from '../../sync/state/dead-letter-store.ts';
import { matchesQuery, storeFilter } from './dead-letter-query.ts';
import type { DeadLetterQuery } from './dead-letter-query.ts';

/** Rows stopped for one reason. */
export interface ReasonGroup {
  category: ErrorCategory;
  field?: string;
  errorCode?: number;
  /** The message with the row's value (its first quoted text) blanked. */
  reason: string;
  count: number;
  /** Where the newest few of them are (`line 12`, `id 7`, `#3`). */
  positions: string[];
  /** The jobs they belong to. */
  jobs: string[];
}

/** The reasons and the choices of one filter. */
export interface DeadLetterSummary {
  /** Most rows first. */
  groups: ReasonGroup[];
  /** Fields, codes and jobs named by the entries under the filter's job, run and category. */
  fields: string[];
  codes: number[];
  jobs: string[];
  /** Entries read; when `complete` is false the newest `scanned` were summarised. */
  scanned: number;
  complete: boolean;
}

/** Positions listed per reason. */
const POSITIONS = 5;
const PAGE = 1000;

/** The message with the row's value blanked and spaces folded, the same for every row it stopped. */
export function reasonOf(message: string): string {
  return message
    .replace(/"(?:[^"\\]|\\.)*"/, '"…"')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Reads up to `maxScan` of the newest entries under the query's job, run and category. */
export async function summariseDeadLetters(
  store: Pick<DeadLetterStore, 'list'>,
  query: DeadLetterQuery,
  options: { maxScan?: number } = {},
): Promise<DeadLetterSummary> {
  const maxScan = options.maxScan ?? 5000;
  const groups = new Map<string, ReasonGroup>();
  const fields = new Set<string>();
  const codes = new Set<number>();
  const jobs = new Set<string>();
  let scanned = 0;
  let cursor: string | undefined;
  const add = (entry: DeadLetterEntry) => {
    if (entry.field !== undefined) fields.add(entry.field);
    if (entry.errorCode !== undefined) codes.add(entry.errorCode);
    jobs.add(entry.job);
    if (!matchesQuery(entry, query)) return;
    const reason = reasonOf(entry.message);
    const key = JSON.stringify([entry.category, entry.field, entry.errorCode, reason]);
    let group = groups.get(key);
    if (group === undefined) {
      group = {
        category: entry.category,
        ...(entry.field === undefined ? {} : { field: entry.field }),
        ...(entry.errorCode === undefined ? {} : { errorCode: entry.errorCode }),
        reason,
        count: 0,
        positions: [],
        jobs: [],
      };
      groups.set(key, group);
    }
    group.count += 1;
    if (group.positions.length < POSITIONS) group.positions.push(positionLabel(entry.source.position));
    if (!group.jobs.includes(entry.job)) group.jobs.push(entry.job);
  };
  for (;;) {
    const page = await store.list({
      ...storeFilter(query),
      limit: Math.min(PAGE, maxScan - scanned),
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const entry of page.entries) add(entry);
    scanned += page.entries.length;
    cursor = page.next;
    if (cursor === undefined || scanned >= maxScan) break;
  }
  return {
    groups: [...groups.values()].sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason)),
    fields: [...fields].sort(),
    codes: [...codes].sort((a, b) => a - b),
    jobs: [...jobs].sort(),
    scanned,
    complete: cursor === undefined,
  };
}
