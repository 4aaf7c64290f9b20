import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/start-emulator.ts';
import type { EmulatorHandle } from '../../src/emulator/start-emulator.ts';

/** Every endpoint of spec §4, in the order of the spec (DELETE /v3/app moved last). */
const SPEC_ENDPOINTS = [
  ['GET', '/v3/orgs/list'],
  ['GET', '/v3/users/me'],
  ['GET', '/v3/apps/list'],
  ['POST', '/v3/apps'],
  ['GET', '/v3/app'],
  ['POST', '/v3/app/sections/batch'],
  ['POST', '/v3/app/items/batch'],
  ['POST', '/v3/app'],
  ['POST', '/v3/app/worksheets/list'],
  ['POST', '/v3/app/worksheets'],
  ['GET', '/v3/app/worksheets/{worksheet_id}'],
  ['POST', '/v3/app/worksheets/{worksheet_id}/structure'],
  ['POST', '/v3/app/worksheets/{worksheet_id}/rows/list'],
  ['GET', '/v3/app/worksheets/{worksheet_id}/rows/{row_id}'],
  ['POST', '/v3/app/worksheets/{worksheet_id}/rows'],
  ['PATCH', '/v3/app/worksheets/{worksheet_id}/rows/{row_id}'],
  ['POST', '/v3/app/worksheets/{worksheet_id}/rows/batch'],
  ['PATCH', '/v3/app/worksheets/{worksheet_id}/rows/batch'],
  ['GET', '/v3/app/worksheets/{worksheet_id}/rows/{row_id}/relations/{field}'],
  ['POST', '/v3/app/worksheets/{worksheet_id}/rows/pivot'],
  ['POST', '/v3/app/worksheets/{worksheet_id}/rows/{row_id}/share-link'],
  ['GET', '/v3/app/worksheets/{worksheet_id}/rows/{row_id}/logs'],
  ['GET', '/v3/app/worksheets/{worksheet_id}/rows/{row_id}/discussions'],
  ['DELETE', '/v3/app/worksheets/{worksheet_id}/rows/{row_id}'],
  ['DELETE', '/v3/app/worksheets/{worksheet_id}/rows/batch'],
  ['POST', '/v3/app/worksheets/{worksheet_id}/views/batch'],
  ['POST', '/v3/app/worksheets/{worksheet_id}/charts'],
  ['PUT', '/v3/app/custom-pages/{page_id}'],
  ['DELETE', '/v3/app/worksheets/{worksheet_id}'],
  ['GET', '/v3/app/workflow/processes'],
  ['GET', '/v3/app/workflow/processes/{process_id}'],
  ['POST', '/v3/app/workflow/hooks/{process_id}'],
  ['POST', '/v3/app/workflows'],
  ['POST', '/v3/app/workflows/{workflow_id}/nodes/batch'],
  ['DELETE', '/v3/app/workflows/{workflow_id}/nodes/{node_id}'],
  ['GET', '/v3/app/workflows/{workflow_id}'],
  ['POST', '/v3/app/workflows/{workflow_id}/validate'],
  ['POST', '/v3/app/workflows/{workflow_id}/publish'],
  ['DELETE', '/v3/app/workflows/{workflow_id}'],
  ['GET', '/v3/app/workflow/instance/list'],
  ['GET', '/v3/app/workflow/instance/{instance_id}'],
  ['POST', '/v3/app/workflow/instance/batch'],
  ['POST', '/v3/app/workflow/instance/{instance_id}/revoke'],
  ['POST', '/v3/app/workflow/instance/{instance_id}/return'],
  ['POST', '/v3/app/workflow/instance/{instance_id}/terminate'],
  ['POST', '/v3/app/workflow/instance/{instance_id}/urge'],
  ['POST', '/v3/app/chatbots'],
  ['GET', '/v3/app/roles'],
  ['POST', '/v3/app/roles'],
  ['GET', '/v3/app/roles/{role_id}'],
  ['POST', '/v3/app/roles/{role_id}/members'],
  ['DELETE', '/v3/app/roles/{role_id}/members'],
  ['DELETE', '/v3/app/roles/users/{user_id}'],
  ['DELETE', '/v3/app/roles/{role_id}'],
  ['POST', '/v3/app/knowledge/list'],
  ['POST', '/v3/app/knowledge/search'],
  ['GET', '/v3/departments/lookup'],
  ['GET', '/v3/regions/lookup'],
  ['GET', '/v3/users/lookup'],
  ['GET', '/v3/app/optionsets'],
  ['POST', '/v3/app/optionsets'],
  ['PUT', '/v3/app/optionsets/{optionset_id}'],
  ['DELETE', '/v3/app/optionsets/{optionset_id}'],
  ['DELETE', '/v3/app'],
] as const;

let emulator: EmulatorHandle;
let headers: Record<string, string>;
const ids: Record<string, string> = {};

beforeAll(async () => {
  emulator = await startEmulator();
  const app = emulator.createApp({ name: 'Endpoints' });
  headers = { 'APP-Appkey': app.appKey, 'APP-Sign': app.sign, 'content-type': 'application/json' };
  ids['worksheet_id'] = emulator.createWorksheet(app.appId, {
    name: 'W',
    fields: [{ name: 'N', alias: 'n', type: 'Text' }],
  }).id;
});

afterAll(async () => {
  await emulator.close();
});

describe('emulator endpoints of spec §4', () => {
  it('has a route for every endpoint, and every one answers with the envelope', async () => {
    const answers: Array<[string, number, unknown]> = [];
    for (const [method, template] of SPEC_ENDPOINTS) {
      const path = template.replace(
        /\{(\w+)\}/g,
        (_, name: string) => ids[name] ?? '000000000000000000000000',
      );
      const res = await fetch(`${emulator.url}${path}`, {
        method,
        headers,
        ...(method === 'GET' ? {} : { body: '{}' }),
      });
      const body = (await res.json()) as Record<string, unknown>;
      answers.push([`${method} ${template}`, res.status, Object.keys(body).sort()]);
    }
    for (const [endpoint, status, keys] of answers) {
      expect(status, endpoint).toBe(200);
      expect(keys, endpoint).toEqual(['data', 'error_code', 'error_msg', 'success']);
    }
    expect(answers).toHaveLength(64);
  });
});
