/**
 * Drops from a change stream the transactions rowbridge itself made (no echo). A two-way
 * job marks its writes to the table with a replication origin (sources/replication-origin.ts);
 * pgoutput sends such a transaction as Begin, Origin (the origin's name), its changes,
 * Commit. PostgreSQL 15's pgoutput cannot leave them out (`origin = none` is 16+), so the
 * stream sees the Origin message and skips the changes up to the Commit. The Commit itself
 * still passes: the slot's position moves past the dropped transaction like any other.
 */
import type { Pgoutput } from 'pg-logical-replication';

/** Tells, message by message, whether a change belongs to a transaction to drop. */
export interface OriginFilter {
  /** Sees every message in order; true for a change (insert, update, delete, truncate) to drop. */
  drops(message: Pgoutput.Message): boolean;
  /** Changes dropped so far. */
  readonly dropped: number;
}

/** A filter dropping the transactions that carry `origin`; none when it is undefined. */
export function createOriginFilter(origin: string | undefined): OriginFilter {
  let dropping = false;
  let dropped = 0;
  return {
    drops(message) {
      switch (message.tag) {
        case 'begin':
        case 'commit':
          dropping = false;
          return false;
        case 'origin':
          dropping = origin !== undefined && message.originName === origin;
          return false;
        case 'insert':
        case 'update':
        case 'delete':
        case 'truncate':
          if (dropping) dropped += 1;
          return dropping;
        default:
          return false;
      }
    },
    get dropped() {
      return dropped;
    },
  };
}
