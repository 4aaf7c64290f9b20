import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as hooks } from '../../src/cli/hooks.ts';
import { captureIo } from '../helpers/capture-io.ts';

/** Issue 26 §1: `rowbridge hooks show JOB` prints what to set in the platform's workflow. */
describe('rowbridge hooks show', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-hooks-cli-'));
    await writeFile(
      path.join(dir, 'copy.yaml'),
      `name: copy
source: { type: worksheet, worksheet: incoming }
target: { worksheet: orders, mode: upsert, key: no }
fields: { no: no }
trigger: { webhook: { tokenEnv: COPY_HOOK_TOKEN } }
`,
    );
    await writeFile(
      path.join(dir, 'plain.yaml'),
      `name: plain
source: { type: worksheet, worksheet: incoming }
target: { worksheet: orders }
fields: { no: no }
`,
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('prints the URL, the header, the body with the row-id placeholder and a curl line', async () => {
    const io = captureIo({ ROWBRIDGE_JOBS_DIR: dir, COPY_HOOK_TOKEN: 'secret-value-0123456789' });
    expect(await hooks(['show', 'copy', '--url', 'https://sync.example.com/'], io)).toBe(0);
    const text = io.stdout.join('\n');
    expect(text).toContain('URL:     https://sync.example.com/hooks/copy');
    expect(text).toContain('Authorization: Bearer <the value of COPY_HOOK_TOKEN>');
    expect(text).toContain('{"rowId": "<Record ID>"}');
    expect(text).toContain(`curl -sS -X POST 'https://sync.example.com/hooks/copy'`);
    expect(text).toContain('-H "Authorization: Bearer $COPY_HOOK_TOKEN"');
    expect(text).not.toContain('secret-value-0123456789');
  });

  it('says how to turn hooks on for a job without a webhook trigger', async () => {
    const io = captureIo({ ROWBRIDGE_JOBS_DIR: dir });
    expect(await hooks(['show', 'plain'], io)).toBe(64);
    expect(io.stderr.join('\n')).toMatch(/job plain takes no webhooks: add trigger: \{ webhook: true \}/);
  });
});
