/**
 * Attack: with ROWBRIDGE_DATA_DIR set, the file pre-pass read a job's path before the
 * data-dir check refused it (an outside file's existence and encoding showed in the
 * error), and looked relative ndjson/json paths up in the jobs folder, so a decoy there
 * was checked while the reader read, and wrote, the file of the data folder.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { prepassFileSource } from '../../src/sync/read/file-prepass.ts';
import { createTempDir, rejection } from '../fixtures/sources/source-test-kit.ts';

/** "café" in latin1: not UTF-8. */
const LATIN1 = Buffer.from([0x63, 0x61, 0x66, 0xe9]);

describe('the pre-pass reads the file the reader reads, confined first', () => {
  let tmp: Awaited<ReturnType<typeof createTempDir>>;
  let jobs: string;
  let data: string;
  let outside: string;

  beforeEach(async () => {
    tmp = await createTempDir('prepass-path');
    jobs = path.join(tmp.dir, 'jobs');
    data = path.join(tmp.dir, 'data');
    outside = path.join(tmp.dir, 'outside');
    for (const dir of [jobs, data, outside]) await mkdir(dir);
    await writeFile(
      path.join(outside, 'latin1.ndjson'),
      Buffer.concat([Buffer.from('{"a":"'), LATIN1, Buffer.from('"}\n')]),
    );
  });
  afterEach(async () => {
    await tmp.remove();
  });

  const deps = () => ({ env: { ROWBRIDGE_DATA_DIR: data }, baseDir: jobs });

  it.each(['ndjson', 'json', 'csv'] as const)(
    'refuses an outside %s path alike whether the file exists, is UTF-8 or not',
    async (type) => {
      const messages: string[] = [];
      for (const file of ['latin1.ndjson', 'missing.ndjson']) {
        for (const p of [path.join(outside, file), `../outside/${file}`]) {
          const err = await rejection(prepassFileSource({ type, path: p }, deps()));
          expect(err.code).toBe('SOURCE_CONFIG');
          expect(err.message).toContain('leads out of the data folder');
          expect(err.message).not.toMatch(/UTF-8|does not exist|not a file/);
          messages.push(err.message.replace(file, 'FILE'));
        }
      }
      // Nothing in the answer tells the existing file from the missing one.
      expect(messages[0]).toBe(messages[2]);
      expect(messages[1]).toBe(messages[3]);
    },
  );

  it.each(['ndjson', 'json'] as const)(
    'checks the data folder file, not a decoy of the same name in the jobs folder (%s)',
    async (type) => {
      const good = type === 'json' ? '[{"a":"ok"}]\n' : '{"a":"ok"}\n';
      const bad =
        type === 'json'
          ? Buffer.concat([Buffer.from('[{"a":"'), LATIN1, Buffer.from('"}]\n')])
          : Buffer.concat([Buffer.from('{"a":"'), LATIN1, Buffer.from('"}\n')]);
      await writeFile(path.join(jobs, `orders.${type}`), good);
      await writeFile(path.join(data, `orders.${type}`), bad);
      const err = await rejection(prepassFileSource({ type, path: `./orders.${type}` }, deps()));
      expect(err.code).toBe('SOURCE_FORMAT');
      expect(err.message).toContain(path.join(data, `orders.${type}`));
      expect(err.message).toContain('not valid UTF-8');

      // A sound data file: the pre-pass hands the reader the path it read.
      await writeFile(path.join(data, `orders.${type}`), good);
      const result = await prepassFileSource({ type, path: `./orders.${type}` }, deps());
      expect(result?.records).toBe(1);
      expect(result?.spec).toMatchObject({ path: path.join(data, `orders.${type}`) });
    },
  );
});
