import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, REDIS_URL } from '../helpers/sync-harness.ts';
import type { Harness } from '../helpers/sync-harness.ts';

/** Every string value stored under a prefix, whatever the key's type. */
async function everyValue(prefix: string): Promise<string[]> {
  const redis = new Redis(REDIS_URL);
  const values: string[] = [];
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        values.push(key);
        const type = await redis.type(key);
        if (type === 'string') values.push((await redis.get(key)) ?? '');
        else if (type === 'hash') values.push(...Object.entries(await redis.hgetall(key)).flat());
        else if (type === 'list') values.push(...(await redis.lrange(key, 0, -1)));
        else if (type === 'set') values.push(...(await redis.smembers(key)));
        else if (type === 'zset') values.push(...(await redis.zrange(key, '0', '-1')));
        else if (type === 'stream') values.push(JSON.stringify(await redis.xrange(key, '-', '+')));
      }
    } while (cursor !== '0');
  } finally {
    redis.quit().catch(() => undefined);
  }
  return values;
}

describe('secrets stay out of Redis and the logs', () => {
  let h: Harness;
  let api: Server;
  const logs: string[] = [];
  const API_TOKEN = 'source-api-token-7f3a';

  beforeAll(async () => {
    api = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.headers.authorization !== `Bearer ${API_TOKEN}`) {
        res.statusCode = 401;
        res.end('{}');
        return;
      }
      res.end(
        JSON.stringify([
          { code: 'K-1', name: 'ok' },
          { code: 'K-2', name: 'also ok' },
          { code: '', name: 'no key' },
        ]),
      );
    });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logs.push(chunk.toString());
        done();
      },
    });
    h = await createHarness(
      'secrets',
      {},
      { SOURCE_TOKEN: API_TOKEN, ROWBRIDGE_SOURCE_ENV_ALLOW: 'SOURCE_TOKEN' },
      sink,
    );
    h.createWorksheet({
      name: 'Keys',
      alias: 'keys',
      fields: [
        { name: 'Code', alias: 'code', type: '2', required: true, isTitle: true },
        { name: 'Name', alias: 'name', type: '2' },
      ],
    });
    await h.writeJob(
      'keys',
      `name: keys
source:
  type: http
  url: http://127.0.0.1:${(api.address() as AddressInfo).port}/keys
  headers: { Authorization: "Bearer \${SOURCE_TOKEN}" }
target: { worksheet: keys, mode: upsert, key: code }
fields: { code: code, name: name }
`,
    );
  });
  afterAll(async () => {
    await new Promise((r) => api.close(r));
    await h.close();
  });

  it('writes no credential into Redis (job data, run state, dead letters, budgets) nor into the logs', async () => {
    const { report } = await h.runJob('keys');
    expect(report).toMatchObject({ created: 2, deadLetteredTotal: 1 });
    const secrets = [String(h.env.ROWBRIDGE_SIGN), String(h.env.ROWBRIDGE_APPKEY), API_TOKEN];
    const stored = await everyValue(h.prefix);
    expect(stored.length).toBeGreaterThan(20);
    for (const secret of secrets) {
      expect(stored.filter((v) => v.includes(secret))).toEqual([]);
      expect(logs.filter((line) => line.includes(secret))).toEqual([]);
    }
    // The logs were really written (debug level), so the check above means something.
    expect(logs.length).toBeGreaterThan(0);
  });
});
