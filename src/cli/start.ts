import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSettings } from '../../config/settings.ts';
import type { CreateWorksheetInput } from '../api/types.ts';
import { startEmulator } from '../emulator/start-emulator.ts';
import { createRedisConnection, parseRedisUrl } from '../queue/redis-connection.ts';
import { positionLabel } from '../sync/state/dead-letter-format.ts';
import type { DeadLetterEntry } from '../sync/state/dead-letter-entry.ts';
import { parseCliArgs } from './args.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { openRuntime } from './open-runtime.ts';
import { reportFailure } from './report-failure.ts';
import { main as runMain } from './run.ts';

const USAGE = 'usage: rowbridge start    (the quickstart; takes no options)';
const QUICKSTART = fileURLToPath(new URL('../../jobs/examples/quickstart/', import.meta.url));
const SHOWN_DEAD_LETTERS = 10;

/** A deliberately bad row of the sample, as jobs/examples/quickstart/bad-rows.json lists it. */
interface BadRow {
  line: number;
  orderNo: string;
  field: string;
  problem: string;
}

/** A redis-server this command started; it lives as long as the command. */
interface PrivateRedis {
  url: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/**
 * `start` (`npm start`): the quickstart. Starts the emulator with an application and the
 * Orders worksheet of jobs/examples/quickstart/, runs the example import through the
 * queue with the `run` command, then shows the dead letters and how to look at them.
 *
 * Exit 0 when the run completed and exactly the sample's deliberately bad rows were
 * dead-lettered: for a demo that is success, and npm would print ERR! noise for 2. Any
 * other dead letter exits 2 as `run` does, a failure 1.
 */
export async function main(args: string[], io: CliIo): Promise<number> {
  try {
    parseCliArgs(args, {}, false);
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}`);
    return EXIT.usage;
  }
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const settings = loadSettings(io.env);
    let redisUrl = settings.redisUrl;
    let privateRedis: PrivateRedis | undefined;
    const answer = await probeRedis(redisUrl);
    if (answer instanceof Error) throw answer;
    if (answer === 'absent') {
      const binary = findOnPath('redis-server', io.env.PATH);
      if (binary === undefined) {
        io.err(noRedisMessage(redisLabel(redisUrl)));
        return EXIT.failure;
      }
      privateRedis = await startPrivateRedis(binary);
      cleanups.push(() => privateRedis!.stop());
      redisUrl = privateRedis.url;
    }

    const emulator = await startEmulator({ headerPrefix: settings.headerPrefix });
    cleanups.push(() => emulator.close());
    const app = emulator.createApp({ name: 'Quickstart' });
    const structure = JSON.parse(
      readFileSync(path.join(QUICKSTART, 'worksheet.json'), 'utf8'),
    ) as CreateWorksheetInput;
    emulator.createWorksheet(app.appId, structure);
    const badRows = JSON.parse(readFileSync(path.join(QUICKSTART, 'bad-rows.json'), 'utf8')) as BadRow[];

    // A fresh queue prefix per run: a shared Redis may hold earlier quickstarts, whose key
    // index points at rows of an emulator that is gone. Braces keep it legal on a cluster.
    const prefix = `{rowbridge-quickstart-${new Date().toISOString().slice(0, 19).replace(/\D/g, '')}-${randomBytes(2).toString('hex')}}`;
    const env: NodeJS.ProcessEnv = {
      ...io.env,
      REDIS_URL: redisUrl,
      ROWBRIDGE_API_URL: emulator.url,
      ROWBRIDGE_APPKEY: app.appKey,
      ROWBRIDGE_SIGN: app.sign,
      ROWBRIDGE_QUEUE_PREFIX: prefix,
      // The emulator is local and unlimited: start fast instead of probing up from 10/s.
      ROWBRIDGE_RATE: io.env.ROWBRIDGE_RATE ?? '200',
      ROWBRIDGE_MAX_RATE: io.env.ROWBRIDGE_MAX_RATE ?? '500',
    };
    io.out(
      [
        'rowbridge quickstart',
        `  redis     ${privateRedis ? `private redis-server on 127.0.0.1:${privateRedis.port} (pid ${privateRedis.pid}; nothing answered at ${redisLabel(settings.redisUrl)}), stopped at the end` : redisLabel(redisUrl)}`,
        `  platform  emulator at ${emulator.url}, application "Quickstart", worksheet ${structure.name} (${structure.fields.length} fields)`,
        `  job       jobs/examples/quickstart/orders.yaml: orders.csv → ${structure.name}, upsert by order_no`,
        `  prefix    ${prefix}`,
        '',
      ].join('\n'),
    );
    const runIo: CliIo = { ...io, env };
    // The report's own "see them: rowbridge dlq list" hint lacks the prefix (and with a
    // private Redis there is nothing left to see): the section after the report replaces it.
    const reportIo: CliIo = {
      ...runIo,
      out: (text) =>
        io.out(
          text
            .split('\n')
            .filter((line) => !line.trimStart().startsWith('see them: rowbridge dlq'))
            .join('\n'),
        ),
    };
    const runCode = await runMain([path.join(QUICKSTART, 'orders.yaml')], reportIo);
    if (runCode !== EXIT.ok && runCode !== EXIT.deadLettered) return runCode;
    return await explainDeadLetters(runIo, badRows, privateRedis !== undefined, prefix);
  } catch (err) {
    return reportFailure(err, io);
  } finally {
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((err: unknown) => io.err(`cleanup: ${(err as Error).message}`));
  }
}

/** Shows the run's dead letters next to the sample's known bad rows; the exit code follows from the comparison. */
async function explainDeadLetters(
  io: CliIo,
  badRows: readonly BadRow[],
  isPrivate: boolean,
  prefix: string,
): Promise<number> {
  const rt = openRuntime(io, { quiet: true });
  try {
    const [run] = await rt.runs.list({ job: 'orders', limit: 1 });
    if (run === undefined) throw new Error('the quickstart run is missing from Redis');
    const entries: DeadLetterEntry[] = [];
    for await (const entry of rt.deadLetters.iterate({ runId: run.runId })) entries.push(entry);
    const expected = new Set(badRows.map((b) => b.line));
    const found = new Set(entries.map((e) => e.source.position.line));
    const unexpected = entries.filter(
      (e) => e.source.position.line === undefined || !expected.has(e.source.position.line),
    );
    const missed = badRows.filter((b) => !found.has(b.line));

    const lines = ['', `Dead letters of run ${run.runId}: ${entries.length}`];
    const width = Math.max(...entries.map((e) => positionLabel(e.source.position).length), 4);
    for (const e of entries.slice(0, SHOWN_DEAD_LETTERS)) {
      lines.push(
        `  ${positionLabel(e.source.position).padEnd(width)}  ${(e.field ?? '-').padEnd(9)}  ${e.message}`,
      );
    }
    if (entries.length > SHOWN_DEAD_LETTERS)
      lines.push(`  ... and ${entries.length - SHOWN_DEAD_LETTERS} more`);
    lines.push('');
    if (isPrivate) {
      lines.push(
        'They were kept in the private Redis, which stops now: the list above is all that is left.',
        'To browse dead letters later (dlq list, show, replay), run Redis yourself (redis-server) and `npm start` again.',
      );
    } else {
      const cli = `ROWBRIDGE_QUEUE_PREFIX='${prefix}' node src/cli.ts`;
      lines.push(
        'Look at them again (with the same REDIS_URL):',
        `  ${cli} dlq list --run ${run.runId}`,
        `  ${cli} dlq show ${entries[0]?.id ?? 'ID'}`,
        `The quickstart's keys stay in Redis under ${prefix}; remove them with`,
        // "$REDIS_URL" keeps its host and database (/2) without printing a password.
        io.env.REDIS_URL === undefined || io.env.REDIS_URL === ''
          ? `  redis-cli --scan --pattern '${prefix}:*' | xargs redis-cli del`
          : `  redis-cli -u "$REDIS_URL" --scan --pattern '${prefix}:*' | xargs redis-cli -u "$REDIS_URL" del`,
      );
    }
    lines.push('');
    if (unexpected.length === 0 && missed.length === 0) {
      lines.push(
        `The ${badRows.length} dead letters are the rows of orders.csv that are bad on purpose (jobs/examples/quickstart/bad-rows.json);`,
        'every other row landed. The quickstart worked.',
      );
      io.out(lines.join('\n'));
      return EXIT.ok;
    }
    for (const e of unexpected)
      lines.push(`unexpected dead letter at ${positionLabel(e.source.position)}: ${e.message}`);
    for (const b of missed)
      lines.push(`line ${b.line} (${b.orderNo}) should have been dead-lettered (${b.problem}) but was not`);
    io.out(lines.join('\n'));
    return EXIT.deadLettered;
  } finally {
    await rt.close();
  }
}

/** `ok` when Redis answers PING, `absent` when nothing listens, an Error when something answers but refuses (auth). */
async function probeRedis(url: string): Promise<'ok' | 'absent' | Error> {
  const client = createRedisConnection(url, {
    bullmq: false,
    lazyConnect: true,
    connectTimeoutMs: 2000,
    once: true,
  });
  let lastError: Error | undefined;
  client.on('error', (err: Error) => {
    lastError = err;
  });
  try {
    await client.connect();
    await client.ping();
    return 'ok';
  } catch (err) {
    const cause = lastError ?? (err as Error);
    const code = (cause as NodeJS.ErrnoException).code ?? '';
    if (
      ['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN'].includes(code) ||
      /Connection is closed|connect ETIMEDOUT|Failed to refresh slots cache|None of startup nodes is available/i.test(
        cause.message,
      )
    ) {
      return 'absent';
    }
    return new Error(`Redis at ${redisLabel(url)} answered but refused the quickstart: ${cause.message}`);
  } finally {
    client.disconnect();
  }
}

/** host:port of REDIS_URL (the nodes of a cluster), never the password. */
function redisLabel(url: string): string {
  try {
    const target = parseRedisUrl(url);
    if (target.kind === 'cluster')
      return `cluster ${target.nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
    const u = new URL(target.url);
    return `${u.hostname}:${u.port || '6379'}`;
  } catch {
    return 'the configured REDIS_URL';
  }
}

function noRedisMessage(where: string): string {
  return [
    `rowbridge start needs Redis, and nothing answers at ${where} (REDIS_URL).`,
    'redis-server is not on PATH either, so the quickstart cannot start a private one. Do one of:',
    '  sudo apt-get install redis-server     (Debian, Ubuntu; then run npm start again)',
    '  brew install redis                    (macOS)',
    '  docker run -d -p 6379:6379 redis:7    (any machine with Docker)',
    '  REDIS_URL=redis://HOST:PORT npm start (a Redis you already have)',
  ].join('\n');
}

function findOnPath(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A throwaway redis-server on loopback: no persistence, data in a temporary folder. */
async function startPrivateRedis(binary: string): Promise<PrivateRedis> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-redis-'));
  const port = await freePort();
  const child: ChildProcess = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Never leave the server behind: not on an uncaught error (exit), not when only this
  // process is signalled (Ctrl-C reaches the whole process group, `kill PID` does not).
  const onExit = () => child.kill('SIGKILL');
  const onSignal = (signal: NodeJS.Signals) => {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('exit', onExit);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const stop = async () => {
    process.removeListener('exit', onExit);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  const url = `redis://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 50; attempt++) {
    if (child.exitCode !== null) break;
    if ((await probeRedis(url)) === 'ok') return { url, port, pid: child.pid!, stop };
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(
    `the private redis-server (${binary}) did not start on 127.0.0.1:${port}:\n${output.trim()}`,
  );
}
