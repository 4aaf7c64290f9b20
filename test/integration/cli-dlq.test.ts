import { statePrefixOf } from '../../src/cli/create-runtime.ts';
import { Redis } from 'ioredis';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_CATEGORIES } from '../../src/ground/errors.ts';
import { createDlqCommand, main } from '../../src/cli/dlq.ts';
import type { DlqDeps } from '../../src/cli/dlq.ts';
import type { CliIo } from '../../src/cli/io.ts';
import { createDeadLetterStore } from '../../src/sync/state/dead-letter-store.ts';
import type { DeadLetterEntry, DeadLetterInput } from '../../src/sync/state/dead-letter-entry.ts';
import type { DeadLetterSelection } from '../../src/sync/state/dead-letter-store.ts';

const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true });
const PREFIX = `rbtest-cli-dlq-${process.pid}`;
// The CLI reads the state keys under the queue prefix, as the runtime writes them.
// Entries are dated 2024: the store judges their age by the same clock.
const store = createDeadLetterStore({
  redis,
  prefix: statePrefixOf(PREFIX),
  now: () => Date.parse('2024-05-02T00:00:00.000Z'),
});
const T0 = Date.parse('2024-05-01T10:00:00.000Z');

async function deleteKeys(): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${PREFIX}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

function captureIo(over: Partial<CliIo> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (text) => out.push(text),
    err: (text) => err.push(text),
    isTty: false,
    env: {},
    cwd: process.cwd(),
    ...over,
  };
  return { io, stdout: () => out.join('\n'), stderr: () => err.join('\n') };
}

interface Harness {
  deps: DlqDeps;
  opened: number;
  closed: number;
  replays: DeadLetterSelection[];
  questions: string[];
}

function harness(options: { replayExit?: number; answer?: boolean } = {}): Harness {
  const h: Harness = {
    opened: 0,
    closed: 0,
    replays: [],
    questions: [],
    deps: {
      openStore: () => {
        h.opened += 1;
        return Promise.resolve({
          store,
          close: () => {
            h.closed += 1;
            return Promise.resolve();
          },
        });
      },
      replay: (selection) => {
        h.replays.push(selection);
        return Promise.resolve(options.replayExit ?? 0);
      },
      confirm: (question) => {
        h.questions.push(question);
        return Promise.resolve(options.answer ?? false);
      },
    },
  };
  return h;
}

const LONG = `value "ACME Corp" is not an option of "customer type"; allowed: ${'option, '.repeat(30)}end`;

const ENTRIES: DeadLetterInput[] = [
  {
    id: 'run-a:11',
    job: 'orders',
    runId: 'run-a',
    category: 'invalid-row',
    errorCode: 430019,
    message: 'field "email" is required',
    field: 'email',
    source: { data: { name: 'Ann', email: '' }, position: { index: 11, line: 12 } },
    payload: [{ id: 'name', value: 'Ann' }],
    attempts: 1,
    createdAt: new Date(T0).toISOString(),
  },
  {
    id: 'run-a:4',
    job: 'orders',
    runId: 'run-a',
    category: 'invalid-row',
    message: LONG,
    field: 'customer_type',
    source: { data: { name: 'Bob' }, position: { index: 4 } },
    attempts: 1,
    createdAt: new Date(T0 + 1000).toISOString(),
  },
  {
    id: 'run-b:0',
    job: 'invoices',
    runId: 'run-b',
    category: 'conflict',
    errorCode: 100005,
    message: 'duplicate value in unique field "number"',
    source: { data: { number: 'INV-1' }, position: { index: 0, id: 'pk-77' } },
    attempts: 3,
    createdAt: new Date(T0 + 2000).toISOString(),
  },
];

beforeEach(async () => {
  if (redis.status === 'wait') await redis.connect();
  await deleteKeys();
  await store.add(ENTRIES);
});

afterAll(async () => {
  await deleteKeys();
  await redis.quit();
});

describe('dlq list', () => {
  it('prints counts by category, then a table with positions and clipped messages, newest first', async () => {
    const h = harness();
    const { io, stdout } = captureIo();
    expect(await createDlqCommand(h.deps).main(['list'], io)).toBe(0);
    const lines = stdout().split('\n').filter(Boolean);
    expect(lines[0]).toBe('3 dead letters: invalid-row 2, conflict 1');
    expect(lines[1]).toMatch(/^ID\s+JOB\s+CATEGORY\s+CODE\s+FIELD\s+POSITION\s+MESSAGE$/);
    expect(lines.slice(2).map((l) => l.split(/\s+/)[0])).toEqual(['run-b:0', 'run-a:4', 'run-a:11']);
    expect(lines[2]).toMatch(/run-b:0\s+invoices\s+conflict\s+100005\s+-\s+id pk-77\s+duplicate value/);
    expect(lines[3]).toMatch(
      /run-a:4\s+orders\s+invalid-row\s+-\s+customer_type\s+record 5\s+value "ACME Corp"/,
    );
    expect(lines[3]).toContain('…');
    expect(lines[3]).not.toContain('end');
    expect(lines[4]).toMatch(
      /run-a:11\s+orders\s+invalid-row\s+430019\s+email\s+line 12\s+field "email" is required$/,
    );
    expect([h.opened, h.closed]).toEqual([1, 1]);
  });

  it('filters by category and job, counting within the job', async () => {
    const { io, stdout } = captureIo();
    expect(
      await createDlqCommand(harness().deps).main(['list', '--job', 'orders', '--category=invalid-row'], io),
    ).toBe(0);
    expect(stdout()).toContain('2 dead letters: invalid-row 2 (job orders)');
    expect(stdout()).not.toContain('run-b:0');
    const empty = captureIo();
    expect(
      await createDlqCommand(harness().deps).main(['list', '--run', 'run-b', '--category', 'auth'], empty.io),
    ).toBe(0);
    expect(empty.stdout()).toContain('no dead letters match (category auth, run run-b)');
  });

  it('prints a JSON array with --json, honouring --limit', async () => {
    const { io, stdout } = captureIo();
    expect(await createDlqCommand(harness().deps).main(['list', '--json', '--limit', '2'], io)).toBe(0);
    const parsed = JSON.parse(stdout()) as DeadLetterEntry[];
    expect(parsed.map((e) => e.id)).toEqual(['run-b:0', 'run-a:4']);
    expect(parsed[0]).toEqual(await store.get('run-b:0'));
  });

  it('says when more entries match than --limit shows', async () => {
    const { io, stdout } = captureIo();
    expect(await createDlqCommand(harness().deps).main(['list', '--limit', '1'], io)).toBe(0);
    expect(stdout()).toContain('showing the newest 1; more match (raise --limit)');
  });

  it('refuses an unknown category, listing the categories, without touching Redis', async () => {
    const h = harness();
    const { io, stderr } = captureIo();
    expect(await createDlqCommand(h.deps).main(['list', '--category', 'bogus'], io)).toBe(64);
    expect(stderr()).toContain(`unknown category "bogus"; categories: ${ERROR_CATEGORIES.join(', ')}`);
    expect(h.opened).toBe(0);
  });

  it.each([
    [['list', '--limit', '0'], '--limit must be a whole number of at least 1, got "0"'],
    [['list', '--limit', '2x'], '--limit must be a whole number of at least 1'],
    [['list', '--verbose'], 'unknown option --verbose'],
    [['list', '--job'], '--job needs a value'],
    [['frobnicate'], 'unknown subcommand "frobnicate"'],
    [[], 'which subcommand?'],
  ])('exits 64 on %j', async (args, message) => {
    const { io, stderr } = captureIo();
    expect(await createDlqCommand(harness().deps).main(args, io)).toBe(64);
    expect(stderr()).toContain(message);
    expect(stderr()).toContain('usage: rowbridge dlq');
  });

  it('prints its usage with --help and exits 0', async () => {
    const { io, stdout } = captureIo();
    expect(await createDlqCommand(harness().deps).main(['list', '--help'], io)).toBe(0);
    expect(stdout()).toContain(
      'dlq replay [--category C | ID... | --file FIXED.csv [--encoding ENC]] [--job NAME]',
    );
    expect(stdout()).toContain('dlq export [--csv]');
  });
});

describe('dlq show', () => {
  it('prints the whole entry: code meaning, position, source record and payload', async () => {
    const { io, stdout } = captureIo();
    expect(await createDlqCommand(harness().deps).main(['show', 'run-a:11'], io)).toBe(0);
    const text = stdout();
    expect(text).toContain('code:     430019 (required field value is empty)');
    expect(text).toContain('position: line 12, record index 11');
    expect(text).toContain('"name": "Ann"');
    expect(text).toMatch(/mapped payload:\n\[\n\s+\{\n\s+"id": "name"/);
  });

  it('prints JSON with --json', async () => {
    const { io, stdout } = captureIo();
    expect(await createDlqCommand(harness().deps).main(['show', 'run-b:0', '--json'], io)).toBe(0);
    expect(JSON.parse(stdout())).toEqual(await store.get('run-b:0'));
  });

  it('exits 1 for an unknown id and 64 without one', async () => {
    const missing = captureIo();
    expect(await createDlqCommand(harness().deps).main(['show', 'run-z:9'], missing.io)).toBe(1);
    expect(missing.stderr()).toBe('dlq show: no dead letter run-z:9');
    const none = captureIo();
    expect(await createDlqCommand(harness().deps).main(['show'], none.io)).toBe(64);
  });
});

describe('dlq purge', () => {
  it('refuses without --yes when not on a terminal and purges nothing', async () => {
    const { io, stderr } = captureIo({ isTty: false });
    expect(await createDlqCommand(harness().deps).main(['purge'], io)).toBe(64);
    expect(stderr()).toContain('refusing to purge without --yes when not on a terminal');
    expect(await store.counts()).toEqual({ 'invalid-row': 2, conflict: 1 });
  });

  it('purges what the filter selects with --yes and says how many', async () => {
    const { io, stdout } = captureIo();
    expect(
      await createDlqCommand(harness().deps).main(['purge', '--category', 'invalid-row', '--yes'], io),
    ).toBe(0);
    expect(stdout()).toBe('purged 2 dead letters (category invalid-row)');
    expect(await store.counts()).toEqual({ conflict: 1 });
  });

  it('asks on a terminal, showing the count, and keeps everything when the answer is no', async () => {
    const no = harness({ answer: false });
    const first = captureIo({ isTty: true });
    expect(await createDlqCommand(no.deps).main(['purge', '--job', 'orders'], first.io)).toBe(1);
    expect(no.questions).toEqual(['purge 2 dead letters (job orders)? [y/N] ']);
    expect(await store.counts()).toEqual({ 'invalid-row': 2, conflict: 1 });

    const yes = harness({ answer: true });
    const second = captureIo({ isTty: true });
    expect(await createDlqCommand(yes.deps).main(['purge', '--job', 'orders'], second.io)).toBe(0);
    expect(second.stdout()).toBe('purged 2 dead letters (job orders)');
    expect(await store.counts()).toEqual({ conflict: 1 });
  });
});

describe('dlq replay', () => {
  it.each([
    [['replay', '--category', 'invalid-row'], { filter: { category: 'invalid-row' } }],
    [['replay', 'run-a:11', 'run-a:4'], { ids: ['run-a:11', 'run-a:4'] }],
    [['replay', 'run-a:11', '--job', 'orders'], { ids: ['run-a:11'], filter: { job: 'orders' } }],
    [['replay', '--job', 'orders'], { filter: { job: 'orders' } }],
    [['replay'], { filter: {} }],
  ])('%j hands the replay %j and exits with its code', async (args, selection) => {
    const h = harness({ replayExit: 2 });
    const { io } = captureIo();
    expect(await createDlqCommand(h.deps).main(args, io)).toBe(2);
    expect(h.replays).toEqual([selection]);
  });

  it.each([
    [['replay', 'run-a:11', '--category', 'conflict'], 'give either IDs or --category, not both'],
    [['replay', '--category', 'nope'], 'unknown category "nope"'],
    [['replay', '--run', 'run-a'], 'unknown option --run'],
  ])('%j is a usage error and replays nothing', async (args, message) => {
    const h = harness();
    const { io, stderr } = captureIo();
    expect(await createDlqCommand(h.deps).main(args, io)).toBe(64);
    expect(stderr()).toContain(message);
    expect(h.replays).toEqual([]);
  });

  it('exits 1 with the reason when the replay throws', async () => {
    const h = harness();
    h.deps.replay = () => Promise.reject(new Error('job spec jobs/orders.yaml: no such file'));
    const { io, stderr } = captureIo();
    expect(await createDlqCommand(h.deps).main(['replay', 'run-a:11'], io)).toBe(1);
    expect(stderr()).toBe('dlq replay: job spec jobs/orders.yaml: no such file');
  });
});

describe('dlq main (settings and a real Redis)', () => {
  it('reads REDIS_URL and ROWBRIDGE_QUEUE_PREFIX and lists from that Redis', async () => {
    const { io, stdout } = captureIo({
      env: { REDIS_URL: 'redis://127.0.0.1:6379', ROWBRIDGE_QUEUE_PREFIX: PREFIX },
    });
    expect(await main(['list', '--json'], io)).toBe(0);
    expect((JSON.parse(stdout()) as DeadLetterEntry[]).map((e) => e.id)).toEqual([
      'run-b:0',
      'run-a:4',
      'run-a:11',
    ]);
  });

  it('hands replay to the queue module, which reports an id it does not know', async () => {
    const { io, stderr } = captureIo({
      env: { REDIS_URL: 'redis://127.0.0.1:6379', ROWBRIDGE_QUEUE_PREFIX: PREFIX },
    });
    expect(await main(['replay', 'run-z:0'], io)).toBe(1);
    expect(stderr()).toContain('run-z:0');
    expect(await store.counts()).toEqual({ 'invalid-row': 2, conflict: 1 });
  });

  it('says which Redis it cannot reach, without the password in the URL', async () => {
    const { io, stderr } = captureIo({ env: { REDIS_URL: 'redis://sync:s3cret-pw@127.0.0.1:1/0' } });
    expect(await main(['list'], io)).toBe(1);
    expect(stderr()).toBe('dlq list: cannot reach Redis at 127.0.0.1:1 (REDIS_URL): ECONNREFUSED');
    expect(stderr()).not.toContain('s3cret-pw');
  });
});
