import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as check } from '../../src/cli/check.ts';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import type { EmulatorHandle } from '../../src/emulator/start-emulator.ts';
import { Redis } from 'ioredis';
import { statePrefixOf } from '../../src/cli/create-runtime.ts';
import { createStructureSnapshots } from '../../src/sync/prepare/schema-drift.ts';
import { captureIo } from '../helpers/capture-io.ts';
import { deleteKeys, REDIS_URL } from '../helpers/sync-harness.ts';

const PREFIX = `rbtest-check-${process.pid}`;

/**
 * A port nothing listens on, below 1024: the OS never hands those out as ephemeral
 * ports, so no other test's server can take it meanwhile.
 */
async function closedPort(): Promise<number> {
  for (const port of [9, 13, 17, 19, 37, 47, 79, 113, 119, 179, 389]) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (!open) return port;
  }
  throw new Error('no closed port below 1024 on 127.0.0.1');
}

describe('rowbridge check: a connection doctor', () => {
  let emulator: EmulatorHandle;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    emulator = await startEmulator();
    const app = emulator.createApp({ name: 'Field Projects' });
    emulator.createWorksheet(app.appId, {
      name: 'Projects',
      alias: 'projects',
      fields: [
        { name: 'Code', alias: 'code', type: 'Text', required: true, isTitle: true },
        { name: 'Budget', alias: 'budget', type: 'Number' },
      ],
    });
    dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-check-'));
    const job = (name: string, worksheet: string, fields: string) =>
      writeFile(
        path.join(dir, `${name}.yaml`),
        `name: ${name}\nsource: { type: csv, path: ./p.csv }\ntarget: { worksheet: ${worksheet}, mode: upsert, key: code }\nfields: ${fields}\n`,
      );
    // check reads the job's source too: the file is there, with the mapped columns.
    await writeFile(path.join(dir, 'p.csv'), 'Code,Budget\nP-1,10\n');
    await job('good', 'projects', '{ code: Code, budget: Budget }');
    await job('lost', 'nope', '{ code: Code }');
    await job('typo', 'projects', '{ code: Code, budgte: Budget }');
    env = {
      ROWBRIDGE_API_URL: emulator.url,
      ROWBRIDGE_APPKEY: app.appKey,
      ROWBRIDGE_SIGN: app.sign,
      ROWBRIDGE_HEADER_PREFIX: (emulator as { headerPrefix?: string }).headerPrefix ?? 'APP-',
      ROWBRIDGE_JOBS_DIR: dir,
      REDIS_URL,
      ROWBRIDGE_QUEUE_PREFIX: PREFIX,
    };
  });
  afterAll(async () => {
    await deleteKeys(`${PREFIX}:*`);
    await emulator.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function run(args: string[], extra: NodeJS.ProcessEnv = {}) {
    const io = captureIo({ ...env, ...extra });
    const code = await check(args, io);
    return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
  }

  it('a good setup: reached, authenticated, worksheets listed, mapping ok, one page read; exit 0', async () => {
    const { code, out } = await run(['good']);
    expect(code).toBe(0);
    expect(out).toMatch(/^check\s+result\s+detail/);
    expect(out).toMatch(/platform\s+ok\s+reached 127\.0\.0\.1:\d+ and authenticated/);
    expect(out).toMatch(/app\s+ok\s+Field Projects: 1 worksheet \(Projects \(projects\)\)/);
    expect(out).toMatch(/target worksheet\s+ok\s+Projects \(\w+\): 2 fields/);
    expect(out).toMatch(/mapping\s+ok\s+2 fields mapped, upsert by code/);
    expect(out).toMatch(/rows\s+ok\s+read one page: 0 rows/);
    expect(out).toMatch(/time zone\s+ok\s+Asia\/Shanghai \(ROWBRIDGE_PLATFORM_TIMEZONE\)/);
    expect(out).toMatch(/drift\s+ok\s+no successful run yet to compare with/);
    expect(out).toMatch(/source columns\s+ok\s+csv source \.\/p\.csv has the 2 columns the job names/);
  });

  it('reports schema drift since the last successful run, like the run would; exit 1', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const snapshots = createStructureSnapshots({ redis, prefix: statePrefixOf(PREFIX) });
      const structure = emulator.state.worksheet('projects')!;
      const mappings = [
        { target: 'code', from: 'Code' },
        { target: 'budget', from: 'Budget' },
      ];
      // The last good run saw Budget as Text; today it is a Number.
      await snapshots.save(
        'good',
        {
          ...structure,
          fields: structure.fields.map((f) => (f.alias === 'budget' ? { ...f, type: 'Text' } : f)),
        },
        mappings,
      );
    } finally {
      redis.disconnect();
    }
    const { code, out } = await run(['good']);
    expect(code).toBe(1);
    expect(out).toMatch(
      /drift\s+FAILED\s+budget: field "Budget" changed type from Text to Number since the last successful run/,
    );
  });

  it('--json gives the same steps as data', async () => {
    const { code, out } = await run(['--json']);
    expect(code).toBe(0);
    const report = JSON.parse(out) as { ok: boolean; steps: Array<{ name: string; ok: boolean }> };
    expect(report.ok).toBe(true);
    expect(report.steps.map((s) => s.name)).toEqual(['settings', 'platform', 'app']);
  });

  it('a wrong header prefix: says which prefix and method it sent, and that the platform uses HAP-; exit 1', async () => {
    const { code, out } = await run([], { ROWBRIDGE_HEADER_PREFIX: 'XYZ-' });
    expect(code).toBe(1);
    expect(out).toMatch(/platform\s+FAILED\s+authentication refused \(code 10101\)/);
    expect(out).toContain('Sent app key + sign as XYZ-Appkey, XYZ-Sign (ROWBRIDGE_HEADER_PREFIX=XYZ-)');
    expect(out).toContain('the public platform uses the prefix HAP-');
    expect(out).not.toContain(env.ROWBRIDGE_SIGN);
  });

  it('a missing worksheet: names it and lists the ones the app has; exit 1', async () => {
    const { code, out } = await run(['lost']);
    expect(code).toBe(1);
    expect(out).toMatch(
      /target worksheet\s+FAILED\s+no worksheet "nope" in this app; the app has Projects \(projects\)/,
    );
  });

  it('a mapping error: names the field and suggests the close one; exit 1', async () => {
    const { code, out } = await run(['typo']);
    expect(code).toBe(1);
    expect(out).toMatch(
      /mapping\s+FAILED\s+budgte: no field with this id or alias in worksheet Projects.*budget/,
    );
  });

  it('a wrong port: names the host, the port and ROWBRIDGE_API_URL; exit 1', async () => {
    const port = await closedPort();
    const { code, out } = await run([], { ROWBRIDGE_API_URL: `http://127.0.0.1:${port}` });
    expect(code).toBe(1);
    expect(out).toContain(`cannot reach 127.0.0.1:${port} (ROWBRIDGE_API_URL=http://127.0.0.1:${port})`);
  });

  it('a base URL copied with /v3 still works (paths carry their own /v3)', async () => {
    const { code } = await run([], { ROWBRIDGE_API_URL: `${emulator.url}/v3` });
    expect(code).toBe(0);
  });

  it('missing credentials: a settings failure naming the variables, nothing sent; exit 1', async () => {
    const { code, out } = await run([], { ROWBRIDGE_APPKEY: '', ROWBRIDGE_SIGN: '' });
    expect(code).toBe(1);
    expect(out).toMatch(
      /settings\s+FAILED\s+no platform credentials: set ROWBRIDGE_APPKEY and ROWBRIDGE_SIGN/,
    );
  });
});
