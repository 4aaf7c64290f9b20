import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import type { EmulatorHandle } from '../../src/emulator/start-emulator.ts';

type Outcome = { kind: 'answer'; status: number; code: number | undefined } | { kind: 'network-error' };

let emulator: EmulatorHandle;
let sheet: WorksheetStructure;
let headers: Record<string, string>;

/** One request with a fresh connection, so a reset never spills onto the next request. */
async function send(method: string, path: string, body?: unknown): Promise<Outcome> {
  try {
    const res = await fetch(`${emulator.url}${path}`, {
      method,
      headers: { ...headers, 'content-type': 'application/json', connection: 'close' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let code: number | undefined;
    try {
      code = (JSON.parse(text) as { error_code?: number }).error_code;
    } catch {
      code = undefined;
    }
    return { kind: 'answer', status: res.status, code };
  } catch {
    return { kind: 'network-error' };
  }
}

const createRow = (n: number) =>
  send('POST', `/v3/app/worksheets/${sheet.id}/rows`, { fields: [{ id: 'name', value: `row ${n}` }] });
const getApp = () => send('GET', '/v3/app');

beforeAll(async () => {
  emulator = await startEmulator({ dialect: 'spec' });
});

beforeEach(() => {
  emulator.setOptions({ faults: undefined });
  emulator.reset();
  const app = emulator.createApp({ name: 'Faults' });
  headers = { 'APP-Appkey': app.appKey, 'APP-Sign': app.sign };
  sheet = emulator.createWorksheet(app.appId, {
    name: 'Rows',
    fields: [{ name: 'Name', alias: 'name', type: 'Text' }],
  });
});

afterAll(async () => {
  await emulator.close();
});

describe('emulator faults', () => {
  it('answers 99999 without applying the write', async () => {
    emulator.setOptions({ faults: { seed: 7, error99999: 0.5 } });
    const outcomes: Outcome[] = [];
    for (let i = 0; i < 20; i += 1) outcomes.push(await createRow(i));
    const failed = outcomes.filter((o) => o.kind === 'answer' && o.code === 99999).length;
    const ok = outcomes.filter((o) => o.kind === 'answer' && o.code === 1).length;
    expect(failed).toBeGreaterThan(0);
    expect(ok).toBeGreaterThan(0);
    expect(failed + ok).toBe(20);
    expect(emulator.state.rowCount(sheet.id)).toBe(ok);
  });

  it('answers HTTP 5xx gateway errors that are not the envelope, without applying', async () => {
    emulator.setOptions({ faults: { seed: 1, http5xx: 1 } });
    const outcome = await createRow(1);
    expect(outcome.kind).toBe('answer');
    if (outcome.kind === 'answer') {
      expect([500, 502, 503, 504]).toContain(outcome.status);
      expect(outcome.code).toBeUndefined();
    }
    expect(emulator.state.rowCount(sheet.id)).toBe(0);
    expect(emulator.requests.at(-1)!.fault).toBe('http-5xx');
  });

  it('resets the connection before applying: nothing is written', async () => {
    emulator.setOptions({ faults: { seed: 1, resetBeforeApply: 1 } });
    expect(await createRow(1)).toEqual({ kind: 'network-error' });
    expect(emulator.state.rowCount(sheet.id)).toBe(0);
    expect(emulator.requests.at(-1)!.fault).toBe('reset-before-apply');
  });

  it('resets the connection AFTER applying a write: the row exists though the client saw an error', async () => {
    emulator.setOptions({ faults: { seed: 1, resetAfterApply: 1 } });
    expect(await createRow(1)).toEqual({ kind: 'network-error' });
    const rows = emulator.state.rows(sheet.id);
    expect(rows.map((r) => r.values['name'])).toEqual(['row 1']);
    expect(emulator.requests.at(-1)).toMatchObject({ fault: 'reset-after-apply', errorCode: 1 });
    // Reads are never hit by resetAfterApply.
    expect(await getApp()).toEqual({ kind: 'answer', status: 200, code: 1 });
    const list = await send('POST', `/v3/app/worksheets/${sheet.id}/rows/list`, {
      pageSize: 10,
      pageIndex: 1,
    });
    expect(list).toEqual({ kind: 'answer', status: 200, code: 1 });
  });

  it('adds latency and still answers', async () => {
    emulator.setOptions({ faults: { seed: 3, latencyMs: [5, 15] } });
    expect(await getApp()).toEqual({ kind: 'answer', status: 200, code: 1 });
    expect(emulator.requests.at(-1)!.fault).toBeUndefined();
  });

  it('replays the same faults for the same seed and request sequence', async () => {
    const faults = { seed: 2024, error99999: 0.2, http5xx: 0.2, resetBeforeApply: 0.1, resetAfterApply: 0.2 };
    const run = async (): Promise<Array<string | undefined>> => {
      emulator.reset();
      const app = emulator.createApp({ name: 'Replay' });
      headers = { 'APP-Appkey': app.appKey, 'APP-Sign': app.sign };
      sheet = emulator.createWorksheet(app.appId, {
        name: 'Rows',
        fields: [{ name: 'Name', alias: 'name', type: 'Text' }],
      });
      emulator.setOptions({ faults });
      for (let i = 0; i < 30; i += 1) await (i % 3 === 0 ? getApp() : createRow(i));
      return emulator.requests.map((r) => r.fault);
    };
    const first = await run();
    const second = await run();
    expect(second).toEqual(first);
    expect(new Set(first)).toEqual(
      new Set([undefined, 'error-99999', 'http-5xx', 'reset-before-apply', 'reset-after-apply']),
    );
  });
});
