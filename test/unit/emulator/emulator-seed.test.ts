import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applySeed } from '../../../src/emulator/apply-seed.ts';
import type { EmulatorDeps } from '../../../src/emulator/deps.ts';
import { createIdGenerator } from '../../../src/emulator/ids.ts';
import { resolveOptions } from '../../../src/emulator/options.ts';
import { parseSeed } from '../../../src/emulator/seed-schema.ts';
import type { EmulatorSeed } from '../../../src/emulator/seed-schema.ts';
import { createEmptyState } from '../../../src/emulator/state/create-state.ts';
import { createStateView } from '../../../src/emulator/state-view.ts';

const EXAMPLE = resolve(import.meta.dirname, '../../../jobs/examples/emulator-seed.json');

function freshDeps(): EmulatorDeps {
  return { state: createEmptyState(), ids: createIdGenerator(), options: resolveOptions() };
}

describe('emulator seed', () => {
  it('loads the shipped example: apps, rows with option text, relations, tokens', async () => {
    const seed = JSON.parse(await readFile(EXAMPLE, 'utf8')) as EmulatorSeed;
    const deps = freshDeps();
    applySeed(deps, seed, EXAMPLE);
    const view = createStateView(deps);
    expect(view.apps().map((a) => a.name)).toEqual(['CRM']);
    const contacts = view.rows('contacts');
    expect(contacts.map((r) => r.text['status'])).toEqual(['Customer', 'Lead']);
    expect(contacts[0]!.text['company']).toBe('Globex');
    expect(contacts[0]!.values['ltv']).toBe(1250.5);
    expect(deps.state.credentials.personalTokens.get('pat_demo_crm_token_0001')!.appIds).toEqual(
      new Set(['65f0000000000000000000a1']),
    );
    expect(deps.state.credentials.refreshTokens.get('ort_demo_refresh_token_0001')).toBe('demo-client');
  });

  it('names every bad path of an invalid seed', () => {
    expect(() =>
      parseSeed(
        { apps: [{ name: '', appKey: 'k', sign: 's', worksheets: [{ name: 'W', fields: [] }] }] },
        'seed.json',
      ),
    ).toThrow(
      /seed\.json is not a valid emulator seed:\n.*apps\.0\.name[\s\S]*apps\.0\.worksheets\.0\.fields/,
    );
  });

  it('names the row of a seed row the platform would refuse', () => {
    const seed: EmulatorSeed = {
      apps: [
        {
          name: 'A',
          appKey: 'k',
          sign: 's',
          worksheets: [
            {
              name: 'W',
              fields: [{ name: 'N', alias: 'n', type: 'Text', required: true }],
              rows: [{ n: 'ok' }, {}],
            },
          ],
        },
      ],
    };
    expect(() => applySeed(freshDeps(), seed, 'seed.json')).toThrow(
      /seed\.json apps\[0\]\.worksheets\[0\]\.rows\[1\]: field "n" \(Text\) is required/,
    );
  });

  it('refuses tokens for apps the seed does not have', () => {
    const seed: EmulatorSeed = {
      apps: [{ name: 'A', appKey: 'k', sign: 's' }],
      personalTokens: [{ token: 'pat_12345678', appIds: ['B'] }],
    };
    expect(() => applySeed(freshDeps(), seed, 'seed.json')).toThrow(/personalTokens\[0\]\.appIds: "B"/);
  });
});
