/**
 * Settings of the API v3 emulator. Everything is optional; the defaults serve the public
 * platform's forms (dialect `platform`: flat rows keyed by alias, type names, `HAP-`
 * headers, zone-less Asia/Shanghai timestamps) with no limits and no faults, so a test
 * gets a well-behaved platform unless it asks otherwise.
 */
import type { EmulatorSeed } from './seed-schema.ts';

/** A token bucket per credential; a request that finds the bucket empty gets error 51. */
export interface RateLimitOptions {
  /** Tokens added per second. */
  requestsPerSecond: number;
  /** Bucket size: how many requests may arrive at once after a quiet spell. */
  burst: number;
}

/** A fixed-window request count per credential; requests over it get error 90000. */
export interface QuotaOptions {
  /** Requests allowed per window. */
  requests: number;
  /** Window length in milliseconds. */
  windowMs: number;
}

/**
 * Injected faults. Each probability is 0..1 and is drawn from a PRNG seeded with `seed`,
 * so the same request sequence meets the same faults on every run.
 */
export interface FaultOptions {
  /** PRNG seed. */
  seed: number;
  /** Extra delay before answering, uniformly in [min, max] milliseconds. */
  latencyMs?: readonly [number, number];
  /** Answer with the envelope error 99999 without applying the request. */
  error99999?: number;
  /** Answer with an HTTP 5xx gateway error without applying the request. */
  http5xx?: number;
  /** Destroy the connection before the request is applied. */
  resetBeforeApply?: number;
  /**
   * Writes only: apply the write, then destroy the connection without answering: the
   * ambiguous case a client must reconcile.
   */
  resetAfterApply?: number;
  /** Inject faults into writes only; reads (lists, structure) go through cleanly. @defaultValue false */
  writesOnly?: boolean;
}

/**
 * Which forms the emulator answers in. `platform`: the public platform's, as pinned in
 * shared/spec/platform-shapes.md (structure keyed `worksheetId`, flat rows keyed by
 * alias with `id`, type names, `HAP-` headers, zone-less organisation-local timestamps,
 * system fields only when asked, the user lookup by exact name with masked contacts).
 * `spec`: the seed spec's forms (api-v3.md).
 */
export type EmulatorDialect = 'platform' | 'spec';

/** Options of {@link startEmulator}. */
export interface EmulatorOptions {
  /** @defaultValue 'platform' */
  dialect?: EmulatorDialect;
  /** The organisation's zone, in which `platform` writes zone-less timestamps. @defaultValue 'Asia/Shanghai' */
  timeZone?: string;
  /** TCP port; 0 picks a free one. @defaultValue 0 */
  port?: number;
  /** @defaultValue '127.0.0.1' */
  host?: string;
  /** Prefix of the authentication headers (`HAP-Appkey`, `HAP-Sign`, `HAP-Appid`). @defaultValue 'HAP-' (platform), 'APP-' (spec) */
  headerPrefix?: string;
  /**
   * Row shape of reads: the spec's `{id, fields: [{id, alias, value, type, controlName}]}`
   * or the flat form keyed by alias (field id with `useFieldIdAsKey`). @defaultValue 'flat' (platform), 'fields' (spec)
   */
  rowShape?: 'fields' | 'flat';
  /**
   * How field types are written in structures and row fields: the spec's code strings
   * ("2") or the public structure's names ("Text"). @defaultValue 'name' (platform), 'code' (spec)
   */
  typeFormat?: 'code' | 'name';
  /**
   * An unknown filter operator fails with 10001 instead of being silently dropped (the
   * real server drops it, platform notes §3). @defaultValue false
   */
  strictOperators?: boolean;
  /** Per-credential request rate. @defaultValue undefined (off) */
  rateLimit?: RateLimitOptions | undefined;
  /** Per-credential request quota. @defaultValue undefined (off) */
  quota?: QuotaOptions | undefined;
  /** Fault injection. @defaultValue undefined (off) */
  faults?: FaultOptions | undefined;
  /** Client IPs allowed to call; others get 10000 (600113 at the token endpoint). @defaultValue undefined (all) */
  ipAllowList?: readonly string[] | undefined;
  /** Lifetime of OAuth access tokens. @defaultValue 7_200_000 (2 hours) */
  accessTokenTtlMs?: number;
  /** Initial content, the same format as the `--seed` JSON file. @defaultValue an empty organisation */
  seed?: EmulatorSeed;
  /** Rows per batch create/update/delete request; more is error 10001. @defaultValue 1000 */
  maxBatchRows?: number;
  /** Options per select field (and per option set); more is error 100006. @defaultValue 100 */
  maxOptionsPerField?: number;
  /** Attachments per attachment field; more is error 100007. @defaultValue 20 */
  maxAttachmentsPerField?: number;
  /**
   * Entries kept in `handle.requests`; past it the oldest tenth is dropped, so a
   * million-request import does not keep a million entries. @defaultValue 100_000
   */
  requestLogLimit?: number;
  /**
   * Clock in epoch milliseconds, injectable so tests can expire tokens and refill buckets,
   * or run the platform's clock apart from the client's (`() => Date.now() - 30_000`): row
   * times, ids, tokens, limits and every answer's `Date` header follow it. @defaultValue Date.now
   */
  now?: () => number;
  /**
   * Awaited before a request is handled (after its faults): a test changes the platform
   * between two pages of a scan this way, with requests of its own, and the held page
   * then sees those changes. @defaultValue undefined (none)
   */
  beforeHandle?: ((request: EmulatorRequest) => void | Promise<void>) | undefined;
}

/** A request as {@link EmulatorOptions.beforeHandle} sees it: no credentials. */
export interface EmulatorRequest {
  method: string;
  /** The request path (a page of rows: `/v3/.../worksheets/ID/rows/list`). */
  path: string;
  /** The parsed JSON body, if any. */
  body: unknown;
}

/** Options with every default filled in. */
export interface ResolvedOptions {
  dialect: EmulatorDialect;
  timeZone: string;
  port: number;
  host: string;
  headerPrefix: string;
  rowShape: 'fields' | 'flat';
  typeFormat: 'code' | 'name';
  strictOperators: boolean;
  rateLimit: RateLimitOptions | undefined;
  quota: QuotaOptions | undefined;
  faults: FaultOptions | undefined;
  ipAllowList: readonly string[] | undefined;
  accessTokenTtlMs: number;
  seed: EmulatorSeed | undefined;
  maxBatchRows: number;
  maxOptionsPerField: number;
  maxAttachmentsPerField: number;
  requestLogLimit: number;
  now: () => number;
  beforeHandle: EmulatorOptions['beforeHandle'];
}

/** Options that {@link EmulatorHandle.setOptions} may change while the server runs. */
export type RuntimeOptions = Pick<
  EmulatorOptions,
  | 'rowShape'
  | 'typeFormat'
  | 'strictOperators'
  | 'rateLimit'
  | 'quota'
  | 'faults'
  | 'ipAllowList'
  | 'accessTokenTtlMs'
  | 'maxBatchRows'
  | 'maxOptionsPerField'
  | 'maxAttachmentsPerField'
  | 'requestLogLimit'
>;

function checkProbability(name: string, value: number | undefined): void {
  if (value === undefined) return;
  if (!Number.isFinite(value) || value < 0 || value > 1) {
    throw new RangeError(
      `emulator option faults.${name} must be a probability between 0 and 1, got ${value}`,
    );
  }
}

function checkPositive(name: string, value: number | undefined): void {
  if (value === undefined) return;
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`emulator option ${name} must be a positive number, got ${value}`);
}

/** Rejects option values that would make the emulator misbehave silently; messages name the option. */
export function validateOptions(options: EmulatorOptions | RuntimeOptions): void {
  const faults = options.faults;
  if (faults !== undefined) {
    if (!Number.isInteger(faults.seed))
      throw new RangeError(`emulator option faults.seed must be an integer, got ${faults.seed}`);
    checkProbability('error99999', faults.error99999);
    checkProbability('http5xx', faults.http5xx);
    checkProbability('resetBeforeApply', faults.resetBeforeApply);
    checkProbability('resetAfterApply', faults.resetAfterApply);
    const latency = faults.latencyMs;
    if (latency !== undefined && !(latency[0] >= 0 && latency[1] >= latency[0])) {
      throw new RangeError(
        `emulator option faults.latencyMs must be [min, max] with 0 <= min <= max, got [${latency.join(', ')}]`,
      );
    }
  }
  if (options.rateLimit !== undefined) {
    checkPositive('rateLimit.requestsPerSecond', options.rateLimit.requestsPerSecond);
    checkPositive('rateLimit.burst', options.rateLimit.burst);
  }
  if (options.quota !== undefined) {
    checkPositive('quota.requests', options.quota.requests);
    checkPositive('quota.windowMs', options.quota.windowMs);
  }
  checkPositive('accessTokenTtlMs', options.accessTokenTtlMs);
  checkPositive('maxBatchRows', options.maxBatchRows);
  checkPositive('maxOptionsPerField', options.maxOptionsPerField);
  checkPositive('maxAttachmentsPerField', options.maxAttachmentsPerField);
  checkPositive('requestLogLimit', options.requestLogLimit);
}

/** Fills in the defaults. */
export function resolveOptions(options: EmulatorOptions = {}): ResolvedOptions {
  validateOptions(options);
  const dialect = options.dialect ?? 'platform';
  if (dialect !== 'platform' && dialect !== 'spec') {
    throw new RangeError(`emulator option dialect must be "platform" or "spec", got ${String(dialect)}`);
  }
  const platform = dialect === 'platform';
  return {
    dialect,
    timeZone: options.timeZone ?? 'Asia/Shanghai',
    port: options.port ?? 0,
    host: options.host ?? '127.0.0.1',
    headerPrefix: options.headerPrefix ?? (platform ? 'HAP-' : 'APP-'),
    rowShape: options.rowShape ?? (platform ? 'flat' : 'fields'),
    typeFormat: options.typeFormat ?? (platform ? 'name' : 'code'),
    strictOperators: options.strictOperators ?? false,
    rateLimit: options.rateLimit,
    quota: options.quota,
    faults: options.faults,
    ipAllowList: options.ipAllowList,
    accessTokenTtlMs: options.accessTokenTtlMs ?? 7_200_000,
    seed: options.seed,
    maxBatchRows: options.maxBatchRows ?? 1000,
    maxOptionsPerField: options.maxOptionsPerField ?? 100,
    maxAttachmentsPerField: options.maxAttachmentsPerField ?? 20,
    requestLogLimit: options.requestLogLimit ?? 100_000,
    now: options.now ?? Date.now,
    beforeHandle: options.beforeHandle,
  };
}
