import { describe, expect, it } from 'vitest';
import { JsonBody } from '../../../src/api/json-body.ts';
import { seededRandom } from '../../helpers/seeded-random.ts';

/** A random JSON-ish value: what JSON.stringify writes of it is the oracle. */
function randomValue(random: () => number, depth: number): unknown {
  const pick = Math.floor(random() * (depth > 3 ? 7 : 11));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return random() < 0.5;
    case 2:
      return Math.round(random() * 1e6) / 100;
    case 3:
      return ['plain', 'Ünïcödé ✓', 'quote " and \\ back', 'line\nbreak', '\u2028', '😀', ''][
        Math.floor(random() * 7)
      ];
    case 4:
      return undefined;
    case 5:
      return new Date(Date.UTC(2024, 1, 1 + Math.floor(random() * 300)));
    case 6:
      return () => 1;
    case 7:
    case 8: {
      // Short and long arrays: the long ones are written 64 elements at a time.
      const long = depth < 2 && random() < 0.5;
      const length = long ? 16 + Math.floor(random() * 140) : Math.floor(random() * 5);
      return Array.from({ length }, () => randomValue(random, depth + 1));
    }
    default: {
      const out: Record<string, unknown> = {};
      const keys = Math.floor(random() * 6);
      for (let k = 0; k < keys; k++) out[`k${k}${k % 2 === 0 ? '"é' : ''}`] = randomValue(random, depth + 1);
      return out;
    }
  }
}

describe('JsonBody', () => {
  it('writes the bytes of JSON.stringify for 2,000 random values', () => {
    const random = seededRandom(20261125);
    for (let round = 0; round < 2000; round++) {
      const value = randomValue(random, 0);
      if (value === undefined || typeof value === 'function') continue;
      const body = new JsonBody(value);
      expect(body.bytes.equals(Buffer.from(JSON.stringify(value))), `round ${round}`).toBe(true);
    }
  });

  it('writes a batch of rows as the platform reads it, holes and all', () => {
    const rows = Array.from({ length: 1000 }, (_, i) => ({
      fields: [
        { id: 'f-order', value: `SO-${i}` },
        { id: 'f-customer', value: i % 7 === 0 ? 'Zoë Ångström' : 'Acme, Inc' },
        { id: 'f-note', value: undefined },
      ],
    }));
    const value = { rows: [...rows, undefined], triggerWorkflow: false, skipped: undefined };
    const text = new JsonBody(value).toString();
    expect(text).toBe(JSON.stringify(value));
    expect(JSON.parse(text)).toMatchObject({ triggerWorkflow: false });
    expect((JSON.parse(text) as { rows: unknown[] }).rows).toHaveLength(1001);
  });
});
