import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { commands } from '../../src/cli/commands.ts';
import { DEPLOYMENT_MALLOC_ENV } from '../../bench/lib/bench-env.ts';
import { parseSeed } from '../../src/emulator/seed-schema.ts';
import { dockerStages } from '../helpers/dockerfile.ts';
import type { Instruction } from '../helpers/dockerfile.ts';

/**
 * compose.yaml and the Dockerfile, read as structures (YAML, Dockerfile instructions)
 * and checked for what an operator relies on. The image's HEALTHCHECK command is run
 * for real against a local server, so a wrong port, path or exit code shows.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string) => readFile(path.join(ROOT, file), 'utf8');

interface ComposeService {
  image?: string;
  command?: string[];
  profiles?: string[];
  ports?: string[];
  container_name?: string;
  env_file?: Array<{ path: string; required?: boolean }>;
  environment?: Record<string, string>;
  healthcheck?: { test?: string[]; disable?: boolean };
  depends_on?: Record<string, { condition: string }>;
}

async function composeServices(): Promise<Record<string, ComposeService>> {
  return (parse(await read('compose.yaml'), { merge: true }) as { services: Record<string, ComposeService> })
    .services;
}

/** The value after `flag` in an argument list (`--port 3000`). */
function option(args: readonly string[] | undefined, flag: string): string | undefined {
  const at = args?.indexOf(flag) ?? -1;
  return at < 0 ? undefined : args?.[at + 1];
}

/** `ENV A=1 B=2` of a stage, as a record. */
function envOf(instructions: Instruction[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const i of instructions.filter((x) => x.keyword === 'ENV'))
    for (const [, key, value] of i.args.matchAll(/(\w+)=(\S+)/g)) env[key!] = value!;
  return env;
}

/** Runs the healthcheck command with `env` and says how it exited. */
function runHealthcheck(command: string[], env: NodeJS.ProcessEnv): Promise<number | null> {
  const [bin, ...args] = command;
  const child = spawn(bin === 'node' ? process.execPath : bin!, args, { env, stdio: 'ignore' });
  return new Promise((resolve) => child.once('exit', resolve));
}

/** A server answering `status` on `/healthz` and 404 elsewhere, for the healthcheck to ask. */
async function opsServer(status: number): Promise<{ port: number; paths: string[]; close(): Promise<void> }> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    res.writeHead(req.url === '/healthz' ? status : 404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    paths,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('compose.yaml', () => {
  it('redis with AOF and noeviction, scalable workers, the dashboard, the emulator demo profile', async () => {
    const services = await composeServices();
    const { redis, worker, dashboard, emulator, demo } = services;
    expect(redis?.command).toEqual([
      'redis-server',
      '--appendonly',
      'yes',
      // Exactly once across a Redis crash needs every acknowledged write on disk.
      '--appendfsync',
      'always',
      '--maxmemory-policy',
      'noeviction',
    ]);
    expect(redis?.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
    for (const [name, service] of Object.entries({ worker, dashboard })) {
      expect(service?.profiles, name).toBeUndefined();
      expect(service?.depends_on?.redis?.condition, name).toBe('service_healthy');
      expect(service?.environment?.REDIS_URL, name).toBe('${REDIS_URL:-redis://redis:6379}');
    }
    // `--scale worker=3` fails with a fixed container name or host port.
    expect(worker?.container_name).toBeUndefined();
    expect(worker?.ports).toBeUndefined();
    expect(worker?.command).toEqual([
      'node',
      'bin/rowbridge.js',
      'worker',
      '--ops-port',
      '9464',
      '--host',
      '0.0.0.0',
    ]);
    expect(emulator?.profiles).toEqual(['demo']);
    expect(demo?.profiles).toEqual(['demo']);
    expect(demo?.depends_on?.emulator?.condition).toBe('service_healthy');
    // Every command the services run exists in the CLI.
    for (const service of Object.values(services))
      if (service.command?.[0] === 'node') {
        // Through the bin, which checks the Node version and turns the compile cache on.
        expect(service.command[1]).toBe('bin/rowbridge.js');
        expect(Object.keys(commands)).toContain(service.command[2]);
      }
  });

  it('the dashboard takes its token from .env (never from compose.yaml), is published on loopback, and its healthcheck asks its own /readyz', async () => {
    const { dashboard } = await composeServices();
    expect(dashboard?.env_file).toContainEqual({ path: '.env', required: false });
    // Secrets stay in .env: compose.yaml is committed.
    for (const secret of ['ROWBRIDGE_DASHBOARD_TOKEN', 'ROWBRIDGE_DASHBOARD_USERS', 'ROWBRIDGE_SIGN'])
      expect(dashboard?.environment ?? {}).not.toHaveProperty(secret);
    const port = option(dashboard?.command, '--port');
    expect(option(dashboard?.command, '--host')).toBe('0.0.0.0');
    expect(dashboard?.ports).toEqual([`127.0.0.1:\${DASHBOARD_PORT:-3000}:${port}`]);
    const [form, bin, flag, script] = dashboard?.healthcheck?.test ?? [];
    expect([form, bin, flag]).toEqual(['CMD', 'node', '-e']);
    const url = new URL(/fetch\('([^']+)'/.exec(script ?? '')?.[1] ?? 'invalid:');
    expect({ host: url.hostname, port: url.port, path: url.pathname }).toEqual({
      host: '127.0.0.1',
      port,
      path: '/readyz',
    });
  });

  it("the demo's credentials open the seed the emulator loads, whose worksheet is the quickstart's", async () => {
    const { emulator, demo } = await composeServices();
    const seedFile = option(emulator?.command, '--seed') ?? '';
    const seed = parseSeed(JSON.parse(await read(seedFile)), seedFile);
    expect(seed.apps[0]).toMatchObject({
      appKey: demo?.environment?.ROWBRIDGE_APPKEY,
      sign: demo?.environment?.ROWBRIDGE_SIGN,
    });
    expect(seed.apps[0]?.worksheets?.[0]).toEqual(
      JSON.parse(await read('jobs/examples/quickstart/worksheet.json')),
    );
    expect(demo?.environment?.ROWBRIDGE_API_URL).toBe(
      `http://emulator:${option(emulator?.command, '--port')}`,
    );
    expect(demo?.command).toEqual([
      'node',
      'bin/rowbridge.js',
      'run',
      'jobs/examples/quickstart/orders.yaml',
    ]);
    expect(demo?.environment?.ROWBRIDGE_QUEUE_PREFIX).toMatch(/\{.+\}/);
  });
});

describe('Dockerfile', () => {
  it('two stages on node:24-slim: production dependencies, then the code the image needs', async () => {
    const stages = dockerStages(await read('Dockerfile'));
    expect(stages.map((s) => [s.image, s.name])).toEqual([
      ['node:24-slim', 'deps'],
      ['node:24-slim', undefined],
    ]);
    const install = stages[0]!.instructions.find((i) => i.keyword === 'RUN')?.args.split(/\s+/) ?? [];
    expect(install.slice(0, 3)).toEqual(['npm', 'ci', '--omit=dev']);
    const copies = stages[1]!.instructions.filter((i) => i.keyword === 'COPY');
    expect(copies.map((c) => [c.flags.from, c.args.split(/\s+/)[0]])).toEqual([
      ['deps', '/app/node_modules'],
      [undefined, 'package.json'],
      [undefined, 'bin'],
      [undefined, 'config'],
      [undefined, 'src'],
      [undefined, 'jobs'],
    ]);
    // What the image copies must not be ignored; secrets and local tooling must be.
    const ignored = (await read('.dockerignore')).split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    for (const needed of ['package.json', 'package-lock.json', 'bin', 'config', 'src', 'jobs'])
      expect(ignored).not.toContain(needed);
    for (const kept of ['.env', '.env.*', 'node_modules', '.git', '.tools']) expect(ignored).toContain(kept);
  });

  it('runs as a non-root user, switched to after the code is copied (root owns it) and before the command', async () => {
    const final = dockerStages(await read('Dockerfile')).at(-1)!.instructions;
    const users = final.filter((i) => i.keyword === 'USER');
    expect(users.map((u) => u.args)).toEqual(['node']);
    const at = (i: Instruction) => final.indexOf(i);
    for (const copy of final.filter((i) => i.keyword === 'COPY'))
      expect(at(copy)).toBeLessThan(at(users[0]!));
    expect(at(users[0]!)).toBeLessThan(final.findIndex((i) => i.keyword === 'CMD'));
  });

  it('the command is the worker on OPS_PORT, and the HEALTHCHECK asks its /healthz there and fails on a 503', async () => {
    const final = dockerStages(await read('Dockerfile')).at(-1)!.instructions;
    const cmd = final.find((i) => i.keyword === 'CMD')?.exec;
    expect(cmd).toEqual(['node', 'bin/rowbridge.js', 'worker', '--ops-port', '9464', '--host', '0.0.0.0']);
    expect(Object.keys(commands)).toContain(cmd?.[2]);
    const env = envOf(final);
    expect(env).toMatchObject({ NODE_ENV: 'production', OPS_PORT: option(cmd, '--ops-port') });
    // glibc's malloc as docs/deployment.md sets it, and the benchmarks measure under.
    expect(env).toMatchObject(DEPLOYMENT_MALLOC_ENV);
    expect(final.find((i) => i.keyword === 'EXPOSE')?.args).toBe(env.OPS_PORT);

    const healthcheck = final.find((i) => i.keyword === 'HEALTHCHECK');
    expect(healthcheck?.flags).toMatchObject({ interval: '30s', timeout: '5s', retries: '3' });
    const command = healthcheck?.exec ?? [];
    const healthy = await opsServer(200);
    const unhealthy = await opsServer(503);
    try {
      const base = { PATH: process.env.PATH };
      expect(await runHealthcheck(command, { ...base, OPS_PORT: String(healthy.port) })).toBe(0);
      expect(healthy.paths).toEqual(['/healthz']);
      expect(await runHealthcheck(command, { ...base, OPS_PORT: String(unhealthy.port) })).toBe(1);
    } finally {
      await healthy.close();
      await unhealthy.close();
    }
  });
});
