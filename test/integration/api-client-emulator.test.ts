import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformClient } from '../../src/api/create-platform-client.ts';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import { ApiError } from '../../src/ground/errors.ts';
import { createRateLimiter } from '../../src/api/limiter/create-rate-limiter.ts';
import { validateFilter, where, and, or } from '../../src/api/rows/filter-builder.ts';
import { iterateRows } from '../../src/api/rows/iterate-rows.ts';
import { normaliseRow } from '../../src/api/rows/normalise-row.ts';
import type { WorksheetStructure } from '../../src/api/types.ts';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import type { EmulatorHandle } from '../../src/emulator/start-emulator.ts';

const fast = () =>
  createRateLimiter({
    budgetKey: `test:emu:${Math.random()}`,
    initialRatePerSec: 2000,
    maxRatePerSec: 2000,
    maxConcurrent: 16,
  });

/** The emulator's header prefix (its handle gains `headerPrefix`; older ones speak APP-). */
function prefixOf(emulator: EmulatorHandle): string {
  return (emulator as { headerPrefix?: string }).headerPrefix ?? 'APP-';
}

describe('the client against the emulator', () => {
  let emulator: EmulatorHandle;
  let app: { appId: string; appKey: string; sign: string };
  let client: PlatformClient;
  let sheet: WorksheetStructure;

  beforeAll(async () => {
    emulator = await startEmulator();
    app = emulator.createApp({ name: 'client-tests' });
    client = createPlatformClient({
      baseUrl: emulator.url,
      headerPrefix: prefixOf(emulator),
      credentials: { kind: 'appkey', appKey: app.appKey, sign: app.sign },
      limiter: fast(),
    });
    await client.worksheets.create({
      name: 'Products',
      alias: 'products',
      fields: [
        { name: 'Sku', alias: 'sku', type: '2', required: true, isTitle: true },
        { name: 'Price', alias: 'price', type: '6' },
        {
          name: 'Tier',
          alias: 'tier',
          type: '11',
          options: [
            { value: 'Gold', index: 1 },
            { value: 'Silver', index: 2 },
          ],
        },
      ],
    });
    // Worksheets answer to their alias as well as their id.
    sheet = await client.worksheets.get('products');
  });
  afterAll(async () => {
    await client.close();
    await emulator.close();
  });

  it('creates 2,500 rows in batches and reads every one back exactly once through the paging iterator', async () => {
    const gold = sheet.fields.find((f) => f.alias === 'tier')!.options!.find((o) => o.value === 'Gold')!.key;
    for (let start = 0; start < 2500; start += 500) {
      const rows = Array.from({ length: 500 }, (_, i) => ({
        fields: [
          { id: 'sku', value: `P-${start + i}` },
          { id: 'price', value: (start + i) % 100 },
          { id: 'tier', value: [gold] },
        ],
      }));
      const { rowIds } = await client.rows.batchCreate(sheet.id, { rows, triggerWorkflow: false });
      expect(rowIds).toHaveLength(500);
    }
    const skus: string[] = [];
    for await (const row of iterateRows((body) => client.rows.list(sheet.id, body), { pageSize: 1000 })) {
      skus.push(String(normaliseRow(row, sheet).values.sku));
    }
    expect(skus).toHaveLength(2500);
    expect(new Set(skus).size).toBe(2500);
  });

  it('filters with operators checked against the structure, and rejects ones the type does not support', async () => {
    // A group holds only groups or only conditions (platform-shapes §8).
    const filter = and(
      and(where('price', 'ge', 95)),
      or(where('sku', 'startswith', 'P-1'), where('sku', 'startswith', 'P-2')),
    );
    validateFilter(filter, sheet);
    const found: number[] = [];
    for await (const row of iterateRows((body) => client.rows.list(sheet.id, body), { filter })) {
      found.push(Number(normaliseRow(row, sheet).values.price));
    }
    // price = n % 100, so 5 of every hundred SKUs qualify: P-195..P-199 and P-295..P-299,
    // 10 hundreds of P-1000..P-1999 and 5 hundreds of P-2000..P-2499.
    expect(found).toHaveLength(5 + 5 + 50 + 25);
    expect(found.every((p) => p >= 95)).toBe(true);
    expect(() => validateFilter(where('price', 'startswith', '9'), sheet)).toThrow(
      /price.*startswith.*allowed/s,
    );
  });

  it('batch update writes one set of fields to all rows and reports failures', async () => {
    const page = await client.rows.list(sheet.id, { pageSize: 3, pageIndex: 1 });
    const ids = page.rows.map((r) => normaliseRow(r, sheet).id);
    const result = await client.rows.batchUpdate(sheet.id, {
      rowIds: [...ids, 'no-such-row'],
      fields: [{ id: 'price', value: 1234 }],
    });
    expect(result.successfulRowIds.sort()).toEqual([...ids].sort());
    expect(result.failedRowIds).toEqual(['no-such-row']);
    const row = normaliseRow(await client.rows.get(sheet.id, ids[0]!), sheet);
    expect(Number(row.values.price)).toBe(1234);
  });

  it('surfaces validation failures with their code and category', async () => {
    const err = await client.rows
      .create(sheet.id, { fields: [{ id: 'price', value: 5 }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ errorCode: 430019, category: 'invalid-row' });
    const gone = await client.worksheets.get('000000000000000000000000').catch((e: unknown) => e);
    expect(gone).toMatchObject({ category: 'not-found' });
  });

  it('paces itself under the server rate limit: every request eventually succeeds', async () => {
    emulator.setOptions({ rateLimit: { requestsPerSecond: 20, burst: 5 } });
    const paced = createPlatformClient({
      baseUrl: emulator.url,
      headerPrefix: prefixOf(emulator),
      credentials: { kind: 'appkey', appKey: app.appKey, sign: app.sign },
      limiter: createRateLimiter({
        budgetKey: `test:paced:${Math.random()}`,
        initialRatePerSec: 60,
        maxRatePerSec: 60,
        backoff51Ms: 200,
      }),
    });
    try {
      const results = await Promise.all(
        Array.from({ length: 60 }, () => paced.rows.list(sheet.id, { pageSize: 1, pageIndex: 1 })),
      );
      expect(results).toHaveLength(60);
      expect(paced.stats.throttled).toBeGreaterThan(0);
      expect(paced.limiter.currentRate()).toBeLessThan(60);
    } finally {
      emulator.setOptions({ rateLimit: undefined });
      await paced.close();
    }
  });

  it('OAuth: 50 concurrent requests meeting expired tokens cause exactly one refresh at the token endpoint', async () => {
    const oauth = emulator.createOAuthClient([app.appId]);
    const api = createPlatformClient({
      baseUrl: emulator.url,
      headerPrefix: prefixOf(emulator),
      credentials: { kind: 'oauth', tokenUrl: emulator.tokenUrl, ...oauth, appId: app.appId },
      limiter: fast(),
    });
    try {
      await api.worksheets.get(sheet.id);
      expect(api.auth.refreshCount).toBe(1);
      emulator.expireAccessTokens();
      const structures = await Promise.all(Array.from({ length: 50 }, () => api.worksheets.get(sheet.id)));
      expect(structures.every((s) => s.id === sheet.id)).toBe(true);
      expect(api.auth.refreshCount).toBe(2);
      expect(emulator.requests.filter((r) => r.path.includes('oauth2/token'))).toHaveLength(2);
    } finally {
      await api.close();
    }
  });

  it('a personal token works only with its own application', async () => {
    const token = emulator.createPersonalToken([app.appId]);
    const other = emulator.createApp({ name: 'other' });
    const mine = createPlatformClient({
      baseUrl: emulator.url,
      headerPrefix: prefixOf(emulator),
      credentials: { kind: 'token', token, appId: app.appId },
      limiter: fast(),
    });
    const theirs = createPlatformClient({
      baseUrl: emulator.url,
      headerPrefix: prefixOf(emulator),
      credentials: { kind: 'token', token, appId: other.appId },
      limiter: fast(),
    });
    try {
      expect((await mine.worksheets.get(sheet.id)).id).toBe(sheet.id);
      const err = await theirs.worksheets.get(sheet.id).catch((e: unknown) => e);
      expect(err).toMatchObject({ category: 'forbidden' });
    } finally {
      await mine.close();
      await theirs.close();
    }
  });
});
