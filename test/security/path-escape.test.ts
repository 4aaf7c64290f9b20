/**
 * Attack: a file source read any path (/etc/passwd landed in dead letters) and a file
 * sink could write anywhere. With ROWBRIDGE_DATA_DIR set, `..`, absolute paths outside
 * it and symlinks pointing out of it are refused for sources and sinks alike.
 */
import { readFile, symlink, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSink } from '../../src/sync/sinks/create-sink.ts';
import { createSource } from '../../src/sync/sources/create-source.ts';
import type { SourceSpec } from '../../src/sync/sources/source-spec.ts';
import { collect, createTempDir, rejection } from '../fixtures/sources/source-test-kit.ts';

describe('ROWBRIDGE_DATA_DIR confines file sources and sinks', () => {
  let data: Awaited<ReturnType<typeof createTempDir>>;
  let outside: Awaited<ReturnType<typeof createTempDir>>;
  let env: Record<string, string>;

  beforeAll(async () => {
    data = await createTempDir('sec-data');
    outside = await createTempDir('sec-outside');
    await outside.write('secret.csv', 'user,password\nroot,hunter2\n');
    await data.write('orders.csv', 'id\n1\n');
    await symlink(join(outside.dir, 'secret.csv'), join(data.dir, 'link.csv'));
    await mkdir(join(data.dir, 'out'));
    await symlink(outside.dir, join(data.dir, 'out', 'escape'));
    env = { ROWBRIDGE_DATA_DIR: data.dir };
  });
  afterAll(async () => {
    await data?.remove();
    await outside?.remove();
  });

  const read = (spec: SourceSpec) => collect(createSource(spec, { env, baseDir: '/somewhere/jobs' }));

  it('refuses ../, an absolute path outside and a symlink out of the folder, never reading the file', async () => {
    for (const path of ['../' + outside.dir.split('/').pop()! + '/secret.csv', '/etc/passwd', 'link.csv']) {
      const err = await rejection(read({ type: 'csv', path }));
      expect(err.code, path).toBe('SOURCE_CONFIG');
      expect(err.message).toContain('source.path');
      expect(err.message).toContain('ROWBRIDGE_DATA_DIR');
      expect(err.message).not.toContain('hunter2');
    }
    expect((await rejection(read({ type: 'ndjson', path: '/etc/passwd' }))).code).toBe('SOURCE_CONFIG');
  });

  it('reads a relative path under the data folder (not the job folder)', async () => {
    const items = await read({ type: 'csv', path: 'orders.csv' });
    expect(items.map((i) => i.data)).toEqual([{ id: '1' }]);
  });

  it('refuses a sink path out of the folder, also through a symlinked folder, and writes nothing there', async () => {
    for (const path of ['../escaped.csv', 'out/escape/written.csv']) {
      const sink = createSink({ type: 'csv', path }, { env, baseDir: '/somewhere/jobs' });
      const err = await rejection(sink.write([{ a: 1 }]));
      expect(err.message, path).toContain('ROWBRIDGE_DATA_DIR');
      await sink.close();
    }
    await expect(readFile(join(outside.dir, 'written.csv'), 'utf8')).rejects.toThrow();
    const ok = createSink({ type: 'ndjson', path: 'out/rows.ndjson' }, { env, baseDir: '/somewhere/jobs' });
    await ok.write([{ a: 1 }]);
    await ok.close();
    expect(await readFile(join(data.dir, 'out', 'rows.ndjson'), 'utf8')).toBe('{"a":1}\n');
  });
});
