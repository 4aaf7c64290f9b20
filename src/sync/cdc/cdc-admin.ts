/**
 * What change capture needs of PostgreSQL, asked and made over an ordinary connection:
 * `cdc setup` (publication and slot), `check` (what is missing), `cdc status` (the slot's
 * position and lag) and `cdc drop`. Every name is quoted as an identifier or passed as a
 * parameter: slot, publication and table names come from a job file.
 */
import type pg from 'pg';
import type { PostgresCdcSourceSpec } from '../sources/source-spec.ts';
import { postgresPrivileges } from '../sources/postgres-privileges.ts';
import { setupOrigin } from './setup-origin.ts';

/** `a.b` → `"a"."b"`; `b` → `"public"."b"`. */
export function quotedTable(table: string): string {
  const [schema, name] = table.includes('.') ? table.split('.', 2) : ['public', table];
  return `${quoteIdent(schema!)}.${quoteIdent(name!)}`;
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The slot as `pg_replication_slots` shows it, with lag measured against the server's WAL. */
export interface SlotState {
  slot: string;
  plugin: string | null;
  active: boolean;
  activePid: number | null;
  confirmedLsn: string | null;
  restartLsn: string | null;
  /** `reserved`, `extended`, `unreserved` or `lost` (invalidated). */
  walStatus: string | null;
  /** WAL written since the slot's confirmed position: what the stream has still to read. */
  lagBytes: number | null;
  /** WAL the server keeps for this slot (from its restart position). */
  retainedBytes: number | null;
}

export async function slotState(client: pg.Client, slot: string): Promise<SlotState | undefined> {
  const { rows } = await client.query<{
    plugin: string | null;
    active: boolean;
    active_pid: number | null;
    confirmed: string | null;
    restart: string | null;
    wal_status: string | null;
    lag: string | null;
    retained: string | null;
  }>(
    `SELECT plugin, active, active_pid, confirmed_flush_lsn::text AS confirmed, restart_lsn::text AS restart,
            wal_status, pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::text AS lag,
            pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::text AS retained
       FROM pg_replication_slots WHERE slot_name = $1`,
    [slot],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  return {
    slot,
    plugin: row.plugin,
    active: row.active,
    activePid: row.active_pid,
    confirmedLsn: row.confirmed,
    restartLsn: row.restart,
    walStatus: row.wal_status,
    // A confirmed position is the last byte + 1: caught up reads as -1, which is 0 behind.
    lagBytes: row.lag === null ? null : Math.max(0, Number(row.lag)),
    retainedBytes: row.retained === null ? null : Number(row.retained),
  };
}

/** A problem of {@link cdcProblems} with the command it names written for `job`. */
export function problemForJob(problem: string, job: string): string {
  return problem.replaceAll(/(rowbridge (?:cdc setup|run)) JOB\b/g, `$1 ${job}`);
}

/** An invalidated slot: its WAL is gone, the changes it stood for cannot be read. */
export function isInvalidated(state: SlotState): boolean {
  return state.walStatus === 'lost' || state.restartLsn === null;
}

/**
 * Everything that stops change capture, each in one sentence saying what to do; empty
 * when nothing does. `setupDone: false` also names a missing slot or publication.
 */
export async function cdcProblems(
  client: pg.Client,
  spec: PostgresCdcSourceSpec,
  options: { setupDone?: boolean } = {},
): Promise<string[]> {
  const problems: string[] = [];
  const wal = (await client.query<{ wal_level: string }>('SHOW wal_level')).rows[0]?.wal_level;
  if (wal !== 'logical')
    problems.push(
      `wal_level is ${wal ?? 'unknown'}, not logical: set wal_level = logical in postgresql.conf and restart the server`,
    );
  const role = (
    await client.query<{ rolname: string; rolreplication: boolean; rolsuper: boolean }>(
      'SELECT rolname, rolreplication, rolsuper FROM pg_roles WHERE rolname = session_user',
    )
  ).rows[0];
  if (role !== undefined && !role.rolreplication && !role.rolsuper)
    problems.push(
      `role ${role.rolname} lacks REPLICATION: ALTER ROLE ${quoteIdent(role.rolname)} REPLICATION`,
    );
  if (spec.allowPrivilegedSource !== true) {
    const privileged = await postgresPrivileges(client);
    if (privileged.length > 0)
      problems.push(
        `${privileged.join('; ')}: connect with a role that has REPLICATION and SELECT on ${spec.table} only, or set allowPrivilegedSource: true`,
      );
  }
  const table = (
    await client.query<{ oid: number; identity: string; pk: boolean }>(
      `SELECT c.oid, c.relreplident AS identity,
              EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary) AS pk
         FROM pg_class c WHERE c.oid = to_regclass($1)`,
      [quotedTable(spec.table)],
    )
  ).rows[0];
  if (table === undefined) problems.push(`table ${spec.table} does not exist`);
  else if (table.identity === 'n' || (table.identity === 'd' && !table.pk))
    problems.push(
      `table ${spec.table} has no primary key or replica identity, so its updates and deletes cannot name their row: add a primary key, or ALTER TABLE ${spec.table} REPLICA IDENTITY FULL`,
    );
  const slot = await slotState(client, spec.slot);
  if (slot !== undefined && slot.plugin !== 'pgoutput')
    problems.push(
      `slot ${spec.slot} decodes with ${slot.plugin ?? 'no plugin'}, not pgoutput: drop it, then run rowbridge cdc setup`,
    );
  else if (slot !== undefined && isInvalidated(slot))
    problems.push(
      `slot ${spec.slot} is invalidated (the server removed WAL it still needed, max_slot_wal_keep_size): run rowbridge run JOB --resnapshot`,
    );
  if (options.setupDone !== false) return problems;
  if (slot === undefined) problems.push(`slot ${spec.slot} does not exist: run rowbridge cdc setup JOB`);
  const publication = await publicationTables(client, spec.publication);
  if (publication === undefined)
    problems.push(`publication ${spec.publication} does not exist: run rowbridge cdc setup JOB`);
  else if (table !== undefined && !publication.includes(table.oid))
    problems.push(
      `publication ${spec.publication} does not include ${spec.table}: ALTER PUBLICATION ${quoteIdent(spec.publication)} ADD TABLE ${quotedTable(spec.table)}`,
    );
  return problems;
}

/** The oids of the publication's tables, or undefined when there is no such publication. */
async function publicationTables(client: pg.Client, name: string): Promise<number[] | undefined> {
  const { rows } = await client.query<{ exists: boolean; oids: number[] | null }>(
    `SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1) AS exists,
            (SELECT array_agg(format('%I.%I', schemaname, tablename)::regclass::oid)
               FROM pg_publication_tables WHERE pubname = $1) AS oids`,
    [name],
  );
  const row = rows[0];
  if (row === undefined || !row.exists) return undefined;
  return (row.oids ?? []).map(Number);
}

/** Creates what is missing: the publication for the table, then the slot. Returns what it did. */
export async function setupCdc(client: pg.Client, spec: PostgresCdcSourceSpec): Promise<string[]> {
  const done: string[] = [];
  const tables = await publicationTables(client, spec.publication);
  if (tables === undefined) {
    await client.query(
      `CREATE PUBLICATION ${quoteIdent(spec.publication)} FOR TABLE ${quotedTable(spec.table)}`,
    );
    done.push(`created publication ${spec.publication} for table ${spec.table}`);
  } else done.push(`publication ${spec.publication} exists`);
  if ((await slotState(client, spec.slot)) === undefined) {
    await client.query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, [spec.slot]);
    done.push(`created logical slot ${spec.slot} (pgoutput)`);
  } else done.push(`slot ${spec.slot} exists`);
  if (spec.origin !== undefined) done.push(await setupOrigin(client, spec.origin, done));
  return done;
}

/** Drops the slot (the server stops keeping WAL for it) and the publication. */
export async function dropCdc(client: pg.Client, spec: PostgresCdcSourceSpec): Promise<string[]> {
  const done: string[] = [];
  const slot = await slotState(client, spec.slot);
  if (slot?.active === true)
    throw new Error(
      `slot ${spec.slot} is in use by server process ${slot.activePid ?? '?'}: stop the workers streaming job's changes first`,
    );
  if (slot !== undefined) {
    await client.query('SELECT pg_drop_replication_slot($1)', [spec.slot]);
    done.push(`dropped slot ${spec.slot}`);
  } else done.push(`no slot ${spec.slot}`);
  const tables = await publicationTables(client, spec.publication);
  if (tables !== undefined) {
    await client.query(`DROP PUBLICATION ${quoteIdent(spec.publication)}`);
    done.push(`dropped publication ${spec.publication}`);
  } else done.push(`no publication ${spec.publication}`);
  return done;
}
