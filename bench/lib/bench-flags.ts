import { parseArgs } from 'node:util';

/** One numeric flag of a benchmark: its default and the smallest value allowed. */
export interface NumberFlag {
  default: number;
  /** @defaultValue 1 */
  min?: number;
  /** Whether fractions are allowed. @defaultValue false */
  fractional?: boolean;
}

/**
 * Parses `--name value` flags of `bench/<script>.ts` into numbers. An unknown flag or a
 * value out of range fails with a message naming the script, the flag and what is
 * allowed, before anything is started.
 */
export function parseNumberFlags<K extends string>(
  script: string,
  flags: Record<K, NumberFlag>,
  argv = process.argv.slice(2),
): Record<K, number> {
  const names = Object.keys(flags) as K[];
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: argv,
      options: Object.fromEntries(names.map((n) => [n, { type: 'string' as const }])),
      strict: true,
    }).values;
  } catch (err) {
    const usage = names.map((n) => `--${n} <${String(flags[n].default)}>`).join(' ');
    throw new Error(`${script}: ${(err as Error).message}. Usage: node ${script} ${usage}`, { cause: err });
  }
  const out = {} as Record<K, number>;
  for (const name of names) {
    const flag = flags[name];
    const raw = values[name];
    const value = typeof raw === 'string' ? Number(raw.replace(/_/g, '')) : flag.default;
    const min = flag.min ?? 1;
    const kind = flag.fractional === true ? 'a number' : 'a whole number';
    if (!Number.isFinite(value) || value < min || (flag.fractional !== true && !Number.isInteger(value))) {
      throw new RangeError(`${script}: --${name} must be ${kind} >= ${min}, got ${JSON.stringify(raw)}`);
    }
    out[name] = value;
  }
  return out;
}
