/**
 * `${file:/run/secrets/name}` (issue 27 §5): a Docker or Kubernetes secret read where a
 * job may write `${ENV}`, read at run start and never shown; confined to
 * ROWBRIDGE_DATA_DIR when that is set, so a spec cannot read a host file into a header.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSource } from '../../src/sync/sources/create-source.ts';
import type { HttpSourceSpec } from '../../src/sync/sources/source-spec.ts';
import { startRecordingServer } from '../helpers/recording-server.ts';
import type { RecordingServer } from '../helpers/recording-server.ts';
import { collect, rejection } from '../fixtures/sources/source-test-kit.ts';

const TOKEN = 'file-secret-7f3a9c';

describe('${file:PATH} in job specs', () => {
  let server: RecordingServer;
  let dir: string;
  let outside: string;

  beforeAll(async () => {
    server = await startRecordingServer();
    server.respond(() => ({ status: 200, body: [] }));
    dir = await mkdtemp(path.join(tmpdir(), 'rowbridge-secret-file-'));
    outside = await mkdtemp(path.join(tmpdir(), 'rowbridge-secret-outside-'));
    await mkdir(path.join(dir, 'secrets'));
    // Mounted secrets usually end with a newline: it is not part of the secret.
    await writeFile(path.join(dir, 'secrets', 'api_token'), `${TOKEN}\n`);
    await writeFile(path.join(outside, 'host-file'), 'host-only-content\n');
    await symlink(path.join(outside, 'host-file'), path.join(dir, 'secrets', 'escape'));
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  const read = (spec: Partial<HttpSourceSpec>, env: NodeJS.ProcessEnv = {}) =>
    collect(createSource({ type: 'http', url: `${server.url}/items`, ...spec }, { env, baseDir: '/' }));

  it('sends the file content as the header, without its line end', async () => {
    server.reset();
    server.respond(() => ({ status: 200, body: [] }));
    const file = path.join(dir, 'secrets', 'api_token');
    await read({ headers: { Authorization: `Bearer \${file:${file}}` } });
    expect(server.last().headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('masks what the file holds in an error of the source', async () => {
    server.reset();
    server.respond(() => ({ status: 404, body: 'no such tenant' }));
    const file = path.join(dir, 'secrets', 'api_token');
    const err = await rejection(read({ url: `${server.url}/tenants/\${file:${file}}/items` }));
    expect(server.last().path).toBe(`/tenants/${TOKEN}/items`);
    expect(err.message).toContain('/tenants/');
    expect(err.message).not.toContain(TOKEN);
    server.respond(() => ({ status: 200, body: [] }));
  });

  it('names the setting and the path of a missing file, before any request', async () => {
    server.reset();
    const err = await rejection(read({ headers: { 'X-Key': '${file:/run/secrets/nope-404}' } }));
    expect(err.code).toBe('SOURCE_CONFIG');
    expect(err.message).toContain('source.headers.X-Key');
    expect(err.message).toContain('${file:/run/secrets/nope-404}, which does not exist');
    expect(server.requests).toHaveLength(0);
  });

  it('with ROWBRIDGE_DATA_DIR, resolves under it and refuses paths and symlinks out of it', async () => {
    server.reset();
    server.respond(() => ({ status: 200, body: [] }));
    const env = { ROWBRIDGE_DATA_DIR: dir };
    await read({ headers: { 'X-Key': '${file:secrets/api_token}' } }, env);
    expect(server.last().headers['x-key']).toBe(TOKEN);
    server.reset();
    for (const ref of [
      `\${file:${path.join(outside, 'host-file')}}`,
      '${file:../x}',
      '${file:secrets/escape}',
    ]) {
      const err = await rejection(read({ headers: { 'X-Key': ref } }, env));
      expect(err.message).toContain('must be inside ROWBRIDGE_DATA_DIR');
      expect(err.message).not.toContain('host-only-content');
    }
    expect(server.requests).toHaveLength(0);
  });
});
