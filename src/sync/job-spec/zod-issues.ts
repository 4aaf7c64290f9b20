/**
 * Turns zod's issues into job spec messages that say what is wrong and what is
 * allowed, one issue per offending key, with "did you mean" for near misses.
 */
import type { z } from 'zod';
import { didYouMean } from './did-you-mean.ts';
import { describeValue } from './schema-checks.ts';

/** An issue before it is located in the YAML document. */
export interface PathIssue {
  path: PropertyKey[];
  message: string;
  /** The last path segment is a key that should not be there: point at the key. */
  atKey?: boolean;
}

type RawIssue = z.core.$ZodRawIssue;

const EXPECTED: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'a mapping of key: value lines',
  record: 'a mapping of key: value lines',
  array: 'a list',
};

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return 'text';
  return `${typeof value} ${describeValue(value)}`;
}

function shapeKeys(inst: unknown): string[] {
  const def = (inst as { _zod?: { def?: { shape?: unknown } } } | undefined)?._zod?.def;
  return typeof def?.shape === 'object' && def.shape !== null ? Object.keys(def.shape) : [];
}

function oneOf(values: readonly unknown[], got: unknown): string {
  const allowed = values.map(String).join(', ');
  const near = typeof got === 'string' ? didYouMean(got, values.map(String)) : undefined;
  if (got === undefined) return `is required: one of ${allowed}`;
  return `must be one of ${allowed}; got ${describeValue(got)}${near === undefined ? '' : ` (did you mean "${near}"?)`}`;
}

/**
 * Creates the per-parse error map. It remembers the keys each strict object allows,
 * keyed by the issue's `keys` array (zod copies the reference into the final issue), so
 * the unknown-key messages can offer the allowed keys without a module-level registry.
 */
export function createIssueMessages(): {
  errorMap: (issue: RawIssue) => string | undefined;
  toPathIssues: (issues: readonly z.core.$ZodIssue[]) => PathIssue[];
} {
  const allowedKeys = new WeakMap<object, string[]>();

  function errorMap(issue: RawIssue): string | undefined {
    switch (issue.code) {
      case 'invalid_type': {
        const expected = EXPECTED[issue.expected] ?? issue.expected;
        return issue.input === undefined
          ? `is required (${expected})`
          : `must be ${expected}; got ${typeName(issue.input)}`;
      }
      case 'invalid_value':
        return oneOf(issue.values, issue.input);
      case 'unrecognized_keys':
        allowedKeys.set(issue.keys, shapeKeys(issue.inst));
        return `unknown keys ${issue.keys.join(', ')}`;
      case 'invalid_union': {
        if (issue.discriminator === undefined) return undefined;
        const input = issue.input as Record<string, unknown> | undefined;
        return oneOf(Array.isArray(issue.options) ? issue.options : [], input?.[issue.discriminator]);
      }
      case 'too_small':
        if (issue.origin === 'string' && issue.minimum === 1) return 'must not be empty';
        return `must be at least ${String(issue.minimum)}`;
      case 'invalid_key':
        return `the key ${issue.issues[0]?.message ?? 'is not allowed'}`;
      case 'too_big':
        return `must be at most ${String(issue.maximum)}`;
      default:
        return undefined;
    }
  }

  function toPathIssues(issues: readonly z.core.$ZodIssue[], prefix: PropertyKey[] = []): PathIssue[] {
    return issues.flatMap((issue): PathIssue[] => {
      const path = [...prefix, ...issue.path];
      if (issue.code === 'unrecognized_keys') {
        const allowed = allowedKeys.get(issue.keys) ?? [];
        return issue.keys.map((key) => {
          const near = didYouMean(key, allowed);
          const hint = near === undefined ? '' : ` (did you mean "${near}"?)`;
          const list = allowed.length === 0 ? '' : `; allowed here: ${allowed.join(', ')}`;
          return { path: [...path, key], message: `unknown key "${key}"${hint}${list}`, atKey: true };
        });
      }
      if (issue.code === 'invalid_union' && issue.discriminator === undefined && issue.errors.length > 0) {
        // The branch whose type matched (no complaint about the value's own type) holds the
        // useful messages: `{from: 1}` should hear about from, not "expected text".
        const matching = issue.errors.filter(
          (branch) => !branch.some((inner) => inner.code === 'invalid_type' && inner.path.length === 0),
        );
        const [only] = matching;
        if (matching.length === 1 && only !== undefined) return toPathIssues(only, path);
      }
      return [{ path, message: issue.message }];
    });
  }

  return { errorMap, toPathIssues: (issues) => toPathIssues(issues) };
}
