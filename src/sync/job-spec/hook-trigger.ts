import type { JobSpec } from './job-spec-schema.ts';

/** A job's `trigger.webhook`, defaults applied. */
export interface HookTrigger {
  /** Hints within this many milliseconds go into one run. */
  debounceMs: number;
  /** Variable of the job's own token (else ROWBRIDGE_HOOK_TOKEN). */
  tokenEnv?: string;
  /** Variable of the job's own whsec_ secret (else ROWBRIDGE_HOOK_SECRET). */
  secretEnv?: string;
}

const DEFAULT_DEBOUNCE_MS = 300;

/** The job's webhook trigger, or undefined when the job takes no hooks. */
export function hookTriggerOf(spec: Pick<JobSpec, 'trigger' | 'target'>): HookTrigger | undefined {
  const webhook = spec.trigger?.webhook;
  if (webhook === undefined || webhook === false || spec.target === undefined) return undefined;
  if (webhook === true) return { debounceMs: DEFAULT_DEBOUNCE_MS };
  return {
    debounceMs: webhook.debounceMs,
    ...(webhook.tokenEnv === undefined ? {} : { tokenEnv: webhook.tokenEnv }),
    ...(webhook.secretEnv === undefined ? {} : { secretEnv: webhook.secretEnv }),
  };
}

/**
 * How a hook names its rows: by source id where the source can read rows by id (a
 * worksheet's row id, a SQL source's keyColumn), else by carrying the records.
 */
export function hookHintKind(spec: Pick<JobSpec, 'source'>): 'rowId' | 'key' | 'record' {
  const source = spec.source;
  if (source.type === 'worksheet') return 'rowId';
  if ((source.type === 'postgres' || source.type === 'mysql') && source.keyColumn !== undefined) return 'key';
  return 'record';
}
