/**
 * A bearer client's latency on the dashboard while another address floods it with wrong
 * basic-auth logins (issue 22, item 1): p50/p99 of `GET /jobs` with no flood and under
 * `--connections` flooding connections, with users configured and with a token only,
 * plus how many guesses the flood got checked per second and how many were refused (429).
 *
 * Usage: node bench/login-flood.ts [--seconds 5] [--connections 16]
 * Needs Redis at REDIS_URL (default redis://127.0.0.1:6379); its keys go under a fresh
 * prefix that is deleted afterwards. Prints one JSON object.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { loadSettings } from '../config/settings.ts';
import { createLogger } from '../src/ground/logger.ts';
import { hashPassword } from '../src/ops/dashboard/password-hash.ts';
import { createReadiness } from '../src/ops/health.ts';
import { createMetrics } from '../src/ops/metrics.ts';
import { startOpsServer } from '../src/ops/ops-server.ts';
import { createRuntime } from '../src/cli/create-runtime.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
if (!(seconds > 0) || !Number.isInteger(connections) || connections < 1) {
  throw new RangeError('bench/login-flood.ts: --seconds must be > 0 and --connections a whole number >= 1');
}

const TOKEN = 'bench-login-flood-token-0123456789';

function get(url: string, from: string, authorization: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress: from, headers: { authorization }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function percentile(sorted: number[], p: number): number {
  const value = sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
  return Math.round(value * 10) / 10;
}

/** Bearer latencies for `seconds`, one request at a time, from another loopback address. */
async function bearerLatencies(url: string): Promise<{ p50: number; p99: number; requests: number }> {
  const times: number[] = [];
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const started = performance.now();
    const status = await get(`${url}/jobs`, '127.0.0.2', `Bearer ${TOKEN}`);
    if (status !== 200) throw new Error(`bearer GET /jobs answered ${status}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), requests: times.length };
}

/**
 * The flood, in a process of its own as an attacker's would be (in this one it would
 * slow the bearer client's loop, not the server's): `connections` keep-alive connections
 * sending wrong logins back to back; on stdin's end it prints its answers' statuses.
 */
const FLOOD = `
import { Agent, request } from 'node:http';
const [url, connections] = [process.argv[1], Number(process.argv[2])];
const agent = new Agent({ keepAlive: true, maxSockets: connections, localAddress: '127.0.0.1' });
const answers = {};
let flooding = true;
process.stdin.resume();
process.stdin.on('end', () => (flooding = false));
const lane = async (n) => {
  for (let i = 0; flooding; i++) {
    const authorization = 'Basic ' + Buffer.from('alice:guess-' + n + '-' + i).toString('base64');
    const status = await new Promise((resolve) => {
      const req = request(url + '/jobs', { agent, headers: { authorization } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      });
      req.on('error', () => resolve(0));
      req.end();
    });
    answers[status] = (answers[status] ?? 0) + 1;
  }
};
await Promise.all(Array.from({ length: connections }, (_, n) => lane(n)));
agent.destroy();
process.stdout.write(JSON.stringify(answers));
`;

function startFlood(url: string): { stop(): Promise<Record<string, number>> } {
  const child = spawn(process.execPath, ['--input-type=module', '-e', FLOOD, url, String(connections)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    async stop() {
      child.stdin.end();
      await exited;
      return JSON.parse(out) as Record<string, number>;
    },
  };
}

const dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-bench-login-'));
const prefix = `rbbench-login-${process.pid}`;
const env = { ...process.env, ROWBRIDGE_QUEUE_PREFIX: prefix, ROWBRIDGE_LOG_LEVEL: 'silent' };
const rt = createRuntime({
  settings: loadSettings(env),
  env,
  logger: createLogger({ level: 'silent' }),
  jobsDir: dir,
});
const metrics = createMetrics(undefined, { defaultMetrics: false });
const results: Record<string, unknown> = { seconds, connections };
try {
  const users = `alice:${hashPassword('correct horse battery')}`;
  for (const [name, access] of [
    ['users', { token: TOKEN, users }],
    ['tokenOnly', { token: TOKEN }],
  ] as const) {
    const server = await startOpsServer({
      rt,
      metrics,
      readiness: createReadiness(),
      port: 0,
      dashboard: true,
      access,
    });
    try {
      const idle = await bearerLatencies(server.url);
      const flood = startFlood(server.url);
      const underFlood = await bearerLatencies(server.url);
      const answers = await flood.stop();
      results[name] = {
        idle,
        underFlood,
        floodAnswers: answers,
        guessesCheckedPerSec: Math.round(((answers['401'] ?? 0) / seconds) * 10) / 10,
      };
    } finally {
      await server.close();
    }
  }
} finally {
  await metrics.close();
  await rt.close();
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
  await redis.quit();
  await rm(dir, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(results)}\n`);
