/**
 * Writes a two-way batch's statements inside the batch's open transaction so that a
 * record the database refuses (table-refusals.ts) is left out and every other record is
 * still written by that one transaction.
 *
 * The statements run in order under a savepoint. When one raises a refusal, the work since
 * the savepoint is rolled back to it, that statement's record is set aside with the
 * database's reason (a statement of several records, a chunk of deletes, is halved
 * instead, until the refused record stands alone), and the statements are run again from
 * the savepoint without it: the error came from exactly that statement after exactly the
 * statements before it, so the ones before are good. Once they are run again, the
 * savepoint moves past them, so a good statement runs at most twice whatever the number
 * of refusals. Any other error is thrown as it came: the caller rolls the transaction back.
 *
 * A new record's key is kept only from the run of its INSERT that stayed: one rolled back
 * to the savepoint gave a key the table no longer holds.
 */
import type { RefusedUnit, Statement, TableRefusals } from './table-refusals.ts';
import type { RefusedWrite, TableWritten } from './table-side-types.ts';

const SAVEPOINT = 'rowbridge_batch';

/** One statement of a batch: the records it writes, and how to run it. */
export interface WriteUnit extends RefusedUnit {
  /** Runs the statement; an INSERT sets its new key in `created` by its ref. */
  run(created: Map<string, string>): Promise<void>;
  /** The statement as two, each of half the records; absent for a statement of one record. */
  split?: () => WriteUnit[];
}

/** Runs `units` in order in the open transaction on `sql`; answers the keys created and the records refused. */
export async function writeIsolatingRefusals(
  units: readonly WriteUnit[],
  sql: Statement,
  refusals: TableRefusals,
): Promise<TableWritten> {
  const list = [...units];
  const created = new Map<string, string>();
  const refused: RefusedWrite[] = [];
  let start = 0;
  // Where the last refusal was: the statements before it are good, the savepoint moves there.
  let checkpoint = -1;
  for (;;) {
    await sql(`SAVEPOINT ${SAVEPOINT}`);
    let pending = new Map<string, string>();
    let at = start;
    try {
      for (; at < list.length; at++) {
        if (at === checkpoint && at > start) {
          await sql(`RELEASE SAVEPOINT ${SAVEPOINT}`);
          for (const [ref, key] of pending) created.set(ref, key);
          pending = new Map();
          await sql(`SAVEPOINT ${SAVEPOINT}`);
          start = at;
        }
        await list[at]!.run(pending);
      }
      await sql(`RELEASE SAVEPOINT ${SAVEPOINT}`);
      for (const [ref, key] of pending) created.set(ref, key);
      return { created, refused };
    } catch (err) {
      if (at >= list.length || !refusals.isRefusal(err)) throw err;
      await sql(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`);
      await sql(`RELEASE SAVEPOINT ${SAVEPOINT}`);
      const unit = list[at]!;
      const halves = unit.refs.length > 1 ? unit.split?.() : undefined;
      if (halves !== undefined) list.splice(at, 1, ...halves);
      else {
        list.splice(at, 1);
        refused.push(await refusals.explain(err, unit));
      }
      checkpoint = at;
    }
  }
}
