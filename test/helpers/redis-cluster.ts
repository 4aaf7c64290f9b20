import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';

const run = promisify(execFile);

/** A Redis Cluster of local redis-server processes on loopback, for one test file. */
export interface LocalRedisCluster {
  /** `redis+cluster://127.0.0.1:p1,127.0.0.1:p2,...` as REDIS_URL takes it. */
  url: string;
  ports: number[];
  pids: number[];
  /** Stops every server and removes their folder. */
  close(): Promise<void>;
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    try {
      accessSync(path.join(dir, name), constants.X_OK);
      return path.join(dir, name);
    } catch {
      // not here
    }
  }
  return undefined;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A port whose cluster bus port (port + 10000) is free too. Ephemeral ports from port 0
 * often sit above 55535, where the bus port cannot exist, so this draws from 20000-29999.
 */
async function clusterPort(taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 10000);
    if (taken.has(port)) continue;
    if ((await canListen(port)) && (await canListen(port + 10000))) {
      taken.add(port);
      return port;
    }
  }
  throw new Error('no free pair of loopback ports (port and port + 10000) in 20000-39999');
}

async function untilTrue(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline)
      throw new Error(`local Redis Cluster: ${what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function ask(port: number, ...command: [string, ...string[]]): Promise<string> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return String(await client.call(...command));
  } finally {
    client.disconnect();
  }
}

/**
 * Starts `masters` redis-server processes with cluster mode on (no persistence, config
 * files in a temporary folder), joins them with `redis-cli --cluster create` and waits
 * for `cluster_state:ok` on every node. Fails with what to install when redis-server or
 * redis-cli is missing.
 */
export async function startRedisCluster(masters = 3): Promise<LocalRedisCluster> {
  const server = onPath('redis-server');
  const cli = onPath('redis-cli');
  if (server === undefined || cli === undefined) {
    throw new Error(
      `the Redis Cluster test needs redis-server and redis-cli on PATH (missing: ${[server ? '' : 'redis-server', cli ? '' : 'redis-cli'].filter(Boolean).join(', ')}); ` +
        'install them with: apt-get install redis-server',
    );
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-cluster-'));
  const children: ChildProcess[] = [];
  const taken = new Set<number>();
  const ports: number[] = [];
  const close = async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await clusterPort(taken);
      ports.push(port);
      // prettier-ignore
      const child = spawn(server, [
        '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes',
        '--cluster-config-file', path.join(dir, `nodes-${port}.conf`), '--dir', dir,
        '--save', '', '--appendonly', 'no', '--logfile', path.join(dir, `redis-${port}.log`),
      ], { stdio: 'ignore' });
      children.push(child);
    }
    for (const port of ports)
      await untilTrue(`PING on port ${port}`, async () => (await ask(port, 'PING')) === 'PONG');
    await run(cli, [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    for (const port of ports) {
      await untilTrue(`cluster_state:ok on port ${port}`, async () =>
        (await ask(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'),
      );
    }
  } catch (err) {
    await close();
    throw err;
  }
  return {
    url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`,
    ports,
    pids: children.map((c) => c.pid!),
    close,
  };
}
