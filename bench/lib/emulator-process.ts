/**
 * Child process of the import benchmarks: runs the API v3 emulator apart from the
 * measured rowbridge process, so its CPU and its in-memory rows do not count against
 * rowbridge's figures.
 *
 *   node bench/lib/emulator-process.ts '{"worksheet": {...}, "rateLimit": {"requestsPerSecond": 10, "burst": 10}}'
 *
 * Creates one application and the worksheet, then prints one JSON line:
 * `{url, appId, appKey, sign, worksheetId, moreWorksheetIds}` (credentials of this throwaway local
 * emulator, read by the parent through a pipe, never logged). Each stdin line
 * `{"cmd": "stats"}` is answered with `{rowCount, moreRowCounts, requests, writeRequests,
 * byCode, cpuSeconds}`: the worksheets' live rows, the requests the emulator received, by envelope code (`none`
 * when no envelope was sent), and the CPU this process has used (user + system).
 * `{"cmd": "field", "alias": "no", "value": "x"}` answers `{rows, distinct, has}` for the
 * first worksheet: its live rows, how many distinct values that field holds, and whether
 * one is `value`. Shuts down when stdin closes.
 */
import type { CreateWorksheetInput } from '../../src/api/types.ts';
import type { RateLimitOptions } from '../../src/emulator/options.ts';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import { serveJsonCommands } from './serve-json-commands.ts';

/** The JSON argument of this script. */
export interface EmulatorProcessConfig {
  worksheet: CreateWorksheetInput;
  /** More worksheets in the same application (e.g. one per loader compared). */
  moreWorksheets?: CreateWorksheetInput[];
  rateLimit?: RateLimitOptions;
}

/** The first line it prints. */
export interface EmulatorProcessReady {
  url: string;
  appId: string;
  appKey: string;
  sign: string;
  worksheetId: string;
  /** The ids of `moreWorksheets`, in order. */
  moreWorksheetIds: string[];
  /** The emulator's authentication header prefix, for ROWBRIDGE_HEADER_PREFIX. */
  headerPrefix: string;
}

/** Its answer to `{cmd: "stats"}`. */
export interface EmulatorProcessStats {
  rowCount: number;
  /** Live rows of each of `moreWorksheets`, in order. */
  moreRowCounts: number[];
  requests: number;
  /** Requests that write rows (every method but GET, list queries excepted). */
  writeRequests: number;
  byCode: Record<string, number>;
  cpuSeconds: number;
}

/** Its answer to `{cmd: "field", alias, value?}`, about the first worksheet. */
export interface EmulatorFieldStats {
  rows: number;
  distinct: number;
  has: boolean;
}

function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

async function main(): Promise<void> {
  const raw = process.argv[2];
  if (raw === undefined)
    throw new Error(
      'bench/lib/emulator-process.ts: pass the config as one JSON argument ({worksheet, rateLimit?})',
    );
  const config = JSON.parse(raw) as EmulatorProcessConfig;
  const emulator = await startEmulator(config.rateLimit === undefined ? {} : { rateLimit: config.rateLimit });
  const app = emulator.createApp({ name: 'bench' });
  const worksheetId = emulator.createWorksheet(app.appId, config.worksheet).id;
  const moreWorksheetIds = (config.moreWorksheets ?? []).map(
    (worksheet) => emulator.createWorksheet(app.appId, worksheet).id,
  );
  const ready: EmulatorProcessReady = {
    url: emulator.url,
    appId: app.appId,
    appKey: app.appKey,
    sign: app.sign,
    worksheetId,
    moreWorksheetIds,
    headerPrefix: (emulator as { headerPrefix?: string }).headerPrefix ?? 'APP-',
  };
  await serveJsonCommands(
    ready,
    (command) => {
      const { cmd, alias, value } = command as { cmd?: unknown; alias?: unknown; value?: unknown };
      if (cmd === 'field' && typeof alias === 'string') {
        const values = emulator.state.rows(worksheetId).map((r) => r.values[alias]);
        const answer: EmulatorFieldStats = {
          rows: values.length,
          distinct: new Set(values).size,
          has: value !== undefined && values.includes(value),
        };
        return answer;
      }
      if (cmd !== 'stats')
        throw new Error(
          `unknown command ${JSON.stringify(cmd)}: the commands are "stats" and "field" (with an alias)`,
        );
      const byCode: Record<string, number> = {};
      let writeRequests = 0;
      for (const r of emulator.requests) {
        if (r.method !== 'GET' && !r.path.endsWith('/list')) writeRequests++;
        const code = r.errorCode === undefined ? 'none' : String(r.errorCode);
        byCode[code] = (byCode[code] ?? 0) + 1;
      }
      const stats: EmulatorProcessStats = {
        rowCount: emulator.state.rowCount(worksheetId),
        moreRowCounts: moreWorksheetIds.map((id) => emulator.state.rowCount(id)),
        requests: emulator.requests.length,
        writeRequests,
        byCode,
        cpuSeconds: cpuSeconds(),
      };
      return stats;
    },
    () => emulator.close(),
  );
}

await main();
