import { describe, expect, it } from 'vitest';
import { createRouter } from '../../../src/emulator/router.ts';
import type { Route } from '../../../src/emulator/router.ts';

const route = (method: Route['method'], path: string, write?: boolean): Route => ({
  method,
  path,
  scope: 'app',
  handler: () => path,
  ...(write === undefined ? {} : { write }),
});

describe('emulator router', () => {
  const router = createRouter([
    route('GET', '/app/worksheets/{worksheet_id}/rows/{row_id}'),
    route('PATCH', '/app/worksheets/{worksheet_id}/rows/{row_id}'),
    route('PATCH', '/app/worksheets/{worksheet_id}/rows/batch'),
    route('POST', '/app/worksheets/{worksheet_id}/rows/list', false),
  ]);

  it('prefers literal segments over parameters and decodes parameters', () => {
    const batch = router.match('PATCH', '/app/worksheets/ws%201/rows/batch');
    expect(batch).toMatchObject({ kind: 'found', params: { worksheet_id: 'ws 1' }, write: true });
    if (batch.kind === 'found') expect(batch.route.path).toContain('/rows/batch');
    const row = router.match('PATCH', '/app/worksheets/w/rows/r1');
    expect(row).toMatchObject({ kind: 'found', params: { worksheet_id: 'w', row_id: 'r1' } });
  });

  it('tells a wrong method from a missing path', () => {
    expect(router.match('DELETE', '/app/worksheets/w/rows/r1')).toEqual({
      kind: 'method-not-allowed',
      allowed: ['GET', 'PATCH'],
    });
    expect(router.match('GET', '/app/nothing')).toEqual({ kind: 'not-found' });
  });

  it('treats GET and flagged POST queries as reads', () => {
    expect(router.match('GET', '/app/worksheets/w/rows/r')).toMatchObject({ write: false });
    expect(router.match('POST', '/app/worksheets/w/rows/list')).toMatchObject({ write: false });
  });
});
