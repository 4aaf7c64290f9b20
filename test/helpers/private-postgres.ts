/**
 * A PostgreSQL server of a test's own, with `wal_level=logical`: the machine's shared
 * server runs with `replica`, which logical replication cannot use. Started by `initdb`
 * and `pg_ctl` as the `postgres` OS user (they refuse to run as root) in a fresh temp
 * folder, on a free port, trust auth on loopback; `stop()` removes it all.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** A running private server. */
export interface PrivatePostgres {
  port: number;
  /** Superuser URL (`postgres`), database `postgres`. */
  url: string;
  /** URL of another role on the same database. */
  urlAs(role: string): string;
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]>;
  stop(): Promise<void>;
}

/** The newest installed PostgreSQL's bin folder (`/usr/lib/postgresql/N/bin`). */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0] === undefined) throw new Error(`no PostgreSQL server binaries under ${root}/*/bin`);
  return path.join(root, versions[0], 'bin');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** As the `postgres` OS user when this process is root (as CI is), else as ourselves. */
function asPostgres(bin: string, args: string[]): Promise<unknown> {
  const root = process.getuid?.() === 0;
  return root ? run('runuser', ['-u', 'postgres', '--', bin, ...args]) : run(bin, args);
}

export async function startPrivatePostgres(settings: string[] = []): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  const dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-pg-'));
  await chmod(dir, 0o777);
  if (process.getuid?.() === 0) await run('chown', ['postgres', dir]);
  const data = path.join(dir, 'data');
  const port = await freePort();
  await asPostgres(path.join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const options = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-k ${dir}`,
    '-c wal_level=logical',
    '-c max_replication_slots=10',
    '-c max_wal_senders=10',
    '-c fsync=off',
    '-c synchronous_commit=off',
    ...settings.map((s) => `-c ${s}`),
  ].join(' ');
  await asPostgres(path.join(bin, 'pg_ctl'), [
    '-D',
    data,
    '-o',
    options,
    '-l',
    path.join(dir, 'log'),
    '-w',
    'start',
  ]);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const stop = async (): Promise<void> => {
    await asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', 'stop']).catch(
      () => undefined,
    );
    await rm(dir, { recursive: true, force: true });
  };
  return {
    port,
    url,
    urlAs: (role) => `postgres://${role}@127.0.0.1:${port}/postgres`,
    async query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const result: pg.QueryResult<R> = await client.query<R>(sql, params);
        return result.rows;
      } finally {
        await client.end();
      }
    },
    stop,
  };
}
