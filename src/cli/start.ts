import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSettings } from '../../config/settings.ts';
import type { CreateWorksheetInput } from '../api/types.ts';
import { startEmulator } from '../emulator/start-emulator.ts';
import { redisAddress } from '../ground/redis-address.ts';
import { positionLabel } from '../sync/state/dead-letter-format.ts';
import type { DeadLetterEntry } from '../sync/state/dead-letter-entry.ts';
import { defineCommand, parseCommand } from './command.ts';
import { cmd, EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { openRuntime } from './open-runtime.ts';
import { findOnPath, noRedisMessage, startPrivateRedis } from './private-redis.ts';
import type { PrivateRedis } from './private-redis.ts';
import { probeRedis, RedisUnreachableError } from './redis-reachable.ts';
import { reportFailure } from './report-failure.ts';
import { main as runMain } from './run.ts';

const START = defineCommand({
  name: 'start',
  usage: ['start'],
  description:
    'The quickstart (npm start): starts the local API emulator with a sample worksheet and\n' +
    'runs the example import of jobs/examples/quickstart/ (3,000 orders, 5 bad on purpose)\n' +
    'through the queue, then shows the dead letters and the dashboard command. Uses Redis at\n' +
    'REDIS_URL, or a private redis-server on loopback when nothing answers there.\n' +
    'Exit 0 when exactly the bad rows were dead-lettered, 2 other dead letters, 1 failure.',
  options: {},
});
const QUICKSTART = fileURLToPath(new URL('../../jobs/examples/quickstart/', import.meta.url));
const SHOWN_DEAD_LETTERS = 10;
/** Where `rowbridge dashboard` listens without --port/--host. */
const DASHBOARD_URL = 'http://127.0.0.1:3000';

/** A deliberately bad row of the sample, as jobs/examples/quickstart/bad-rows.json lists it. */
interface BadRow {
  line: number;
  orderNo: string;
  field: string;
  problem: string;
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
  const parsed = parseCommand(START, args, io);
  if (typeof parsed === 'number') return parsed;
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const settings = loadSettings(io.env);
    let redisUrl = settings.redisUrl;
    let privateRedis: PrivateRedis | undefined;
    const answer = await probeRedis(redisUrl, 2000);
    if (answer !== 'ok') {
      // Something answered but refused (a password, TLS): a private server would hide that.
      if (!(answer instanceof RedisUnreachableError)) throw answer;
      const binary = findOnPath('redis-server', io.env.PATH);
      if (binary === undefined) {
        io.err(noRedisMessage(redisAddress(redisUrl)));
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
        `  redis     ${privateRedis ? `private redis-server on 127.0.0.1:${privateRedis.port} (pid ${privateRedis.pid}; nothing answered at ${redisAddress(settings.redisUrl)}), stopped at the end` : redisAddress(redisUrl)}`,
        `  platform  emulator at ${emulator.url}, application "Quickstart", worksheet ${structure.name} (${structure.fields.length} fields)`,
        `  job       jobs/examples/quickstart/orders.yaml: orders.csv → ${structure.name}, upsert by order_no`,
        `  prefix    ${prefix}`,
        '',
      ].join('\n'),
    );
    const runIo: CliIo = { ...io, env };
    // The report's own "see them: … dlq list" hint (named as the command was typed, so
    // `rowbridge` or `node src/cli.ts`) lacks the prefix, and with a private Redis there is
    // nothing left to see: the section after the report replaces it.
    const reportIo: CliIo = {
      ...runIo,
      out: (text) =>
        io.out(
          text
            .split('\n')
            .filter((line) => !line.trimStart().startsWith(`see them: ${cmd(io)} dlq`))
            .join('\n'),
        ),
    };
    const runCode = await runMain([path.join(QUICKSTART, 'orders.yaml')], reportIo);
    if (runCode !== EXIT.ok && runCode !== EXIT.deadLettered) return runCode;
    // The user's own REDIS_URL (runIo's always has one: the quickstart sets it for the run).
    const userSetRedisUrl = io.env.REDIS_URL !== undefined && io.env.REDIS_URL !== '';
    return await explainDeadLetters(runIo, badRows, privateRedis !== undefined, prefix, userSetRedisUrl);
  } catch (err) {
    return reportFailure(err, io);
  } finally {
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((err: unknown) => io.err(`cleanup: ${(err as Error).message}`));
  }
}

/** The quickstart's last lines: the command that shows its run on the dashboard's jobs page. */
function dashboardHint(prefix: string, isPrivate: boolean): string[] {
  const url = `${DASHBOARD_URL}/jobs`;
  if (isPrivate) {
    return [
      `The dashboard shows runs on its jobs page (node src/cli.ts dashboard, then ${url}),`,
      'but this run was in the private Redis: with a Redis of your own, npm start keeps it there.',
    ];
  }
  return [
    "See the run on the dashboard's jobs page (same REDIS_URL):",
    `  ROWBRIDGE_QUEUE_PREFIX='${prefix}' node src/cli.ts dashboard`,
    `  then open ${url}`,
  ];
}

/** Shows the run's dead letters next to the sample's known bad rows; the exit code follows from the comparison. */
async function explainDeadLetters(
  io: CliIo,
  badRows: readonly BadRow[],
  isPrivate: boolean,
  prefix: string,
  userSetRedisUrl: boolean,
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
        !userSetRedisUrl
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
    }
    for (const e of unexpected)
      lines.push(`unexpected dead letter at ${positionLabel(e.source.position)}: ${e.message}`);
    for (const b of missed)
      lines.push(`line ${b.line} (${b.orderNo}) should have been dead-lettered (${b.problem}) but was not`);
    lines.push('', ...dashboardHint(prefix, isPrivate));
    io.out(lines.join('\n'));
    return unexpected.length === 0 && missed.length === 0 ? EXIT.ok : EXIT.deadLettered;
  } finally {
    await rt.close();
  }
}
