/**
 * Every row list the sync builds (key index, reference lookups, the worksheet source of a
 * pull, `check`) asks for rows keyed by field id. Without `useFieldIdAsKey: true` the key
 * of a field whose alias is empty is undocumented (platform-shapes §5 [U]). The answers
 * are the platform's own (platform-examples/), read through the real client stack.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createPlatformClient } from '../../src/api/create-platform-client.ts';
import type { PlatformClient } from '../../src/api/create-platform-client.ts';
import { createRateLimiter } from '../../src/api/limiter/create-rate-limiter.ts';
import type { RateLimiter } from '../../src/api/limiter/create-rate-limiter.ts';
import type { NormalisedRow } from '../../src/api/types.ts';
import { checkJob } from '../../src/sync/check/check-setup.ts';
import { anyOf, createRowReader } from '../../src/sync/prepare/create-reference-lookups.ts';
import { readWorksheetKeys } from '../../src/sync/write/create-sync-context.ts';
import { parseJobSpec } from '../../src/sync/job-spec/load-job-spec.ts';
import { validateMapping } from '../../src/sync/mapping/validate-mapping.ts';
import { createWorksheetReader } from '../../src/sync/pull/read-worksheet-rows.ts';
import { envelope, startRecordingServer } from '../helpers/recording-server.ts';
import type { RecordingServer } from '../helpers/recording-server.ts';

const EXAMPLES = path.resolve(import.meta.dirname, '../../../shared/spec/platform-examples');
const example = (file: string) =>
  JSON.parse(readFileSync(path.join(EXAMPLES, file), 'utf8')) as {
    answer: { data: unknown };
    variants?: Array<{ why: string; answer: { data: unknown } }>;
  };
const structureAnswer = example('worksheet-get.json').answer;
/** The list answer keyed by field id (the export's variant for `useFieldIdAsKey: true`). */
const byIdAnswer = example('rows-list.json').variants!.find((v) =>
  v.why.startsWith('useFieldIdAsKey true'),
)!.answer;
const WS = (structureAnswer.data as { worksheetId: string }).worksheetId;
const ZONE = 'Asia/Shanghai';

let server: RecordingServer;
let client: PlatformClient;
let limiter: RateLimiter;

beforeAll(async () => {
  server = await startRecordingServer();
  limiter = createRateLimiter({
    budgetKey: 'test:client-row-reads',
    initialRatePerSec: 1000,
    maxRatePerSec: 1000,
    burstMs: 1000,
  });
  client = createPlatformClient({
    baseUrl: server.url,
    credentials: { kind: 'appkey', appKey: 'contract-key', sign: 'contract-sign' },
    retry: { retries: 0, unknownRetries: 0 },
    limiter,
    organisation: { timeZone: ZONE },
  });
});
afterAll(async () => {
  await client.close();
  await limiter.stop();
  await server.close();
});
beforeEach(() => {
  server.reset();
  server.respond((req) =>
    req.path.endsWith('/rows/list')
      ? { body: byIdAnswer }
      : req.method === 'GET' && req.path === `/v3/app/worksheets/${WS}`
        ? { body: structureAnswer }
        : { body: envelope({}) },
  );
});

const listBodies = () => server.requests.filter((r) => r.path.endsWith('/rows/list')).map((r) => r.body);

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const pushJob = parseJobSpec(
  `name: projects
source: { type: csv, path: ./projects.csv }
target: { worksheet: ${WS}, mode: upsert, key: project_name }
fields: { project_name: Name, budget: Budget }
`,
  'projects.yaml',
);
const pullJob = parseJobSpec(
  `name: projects-out
source: { type: worksheet, worksheet: ${WS} }
sink: { type: csv, path: ./projects.csv }
fields: { name: project_name, budget: budget }
`,
  'projects-out.yaml',
);

it('the key index reads keys by field id and finds the row under the job key', async () => {
  const structure = await client.worksheets.get(WS);
  const plan = validateMapping(pushJob.mappings, structure, { mode: 'upsert', key: 'project_name' });
  const keys = await all(readWorksheetKeys(client, structure, plan));
  expect(keys.map((k) => k.rowId)).toEqual(['8f3a1c6e-2b94-4d7f-a051-6c9e2d8b4f17']);
  expect(listBodies()).not.toHaveLength(0);
  for (const body of listBodies()) expect(body).toMatchObject({ useFieldIdAsKey: true });
});

it('reference lookups and the worksheet source read by field id, values under the aliases', async () => {
  const reader = createRowReader(client);
  const looked = await reader.list(WS, anyOf('project_name', ['Harbor Bridge Retrofit']));
  const pulled: NormalisedRow[] = await all(createWorksheetReader(() => client)({ worksheet: WS }));
  for (const rows of [looked, pulled]) {
    expect(rows.map((r) => [r.values.project_name, Number(r.values.budget)])).toEqual([
      ['Harbor Bridge Retrofit', 125000.5],
    ]);
  }
  expect(listBodies()).toHaveLength(2);
  for (const body of listBodies()) expect(body).toMatchObject({ useFieldIdAsKey: true });
});

it('check reads its page of rows by field id, for a push job and a pull job', async () => {
  const facts = {
    apiUrl: server.url,
    method: 'app key + sign',
    headers: '',
    headerPrefix: 'HAP-',
    timeZone: ZONE,
  };
  for (const spec of [pushJob, pullJob]) {
    const steps = await checkJob(spec, client, facts, undefined);
    expect(steps.find((s) => s.name === 'rows')).toMatchObject({ ok: true });
  }
  expect(listBodies()).toHaveLength(2);
  for (const body of listBodies()) expect(body).toMatchObject({ useFieldIdAsKey: true });
});
