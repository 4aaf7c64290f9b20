/** A job's `trigger`: what starts a run besides a schedule (a webhook, docs/webhooks.md). */
import { z } from 'zod';
import { describeValue, intRange } from './schema-checks.ts';

/** Names a variable holding a hook credential; the value itself never goes in a job file. */
const credentialEnv = (example: string) =>
  z.string().regex(/^[A-Z_][A-Z0-9_]*$/, {
    error: (issue) =>
      `must be the NAME of the environment variable holding the credential: upper-case letters, digits and _ (e.g. ${example}); got ${typeof issue.input === 'string' ? 'another text (not echoed: it may be the credential)' : describeValue(issue.input)}`,
  });

const webhookSchema = z
  .strictObject({
    tokenEnv: credentialEnv('ORDERS_HOOK_TOKEN')
      .optional()
      .describe("Variable holding this job's hook token (instead of ROWBRIDGE_HOOK_TOKEN)."),
    secretEnv: credentialEnv('ORDERS_HOOK_SECRET')
      .optional()
      .describe("Variable holding this job's whsec_ signing secret (instead of ROWBRIDGE_HOOK_SECRET)."),
    debounceMs: intRange(0, 60_000)
      .default(300)
      .describe('Hints arriving within this many milliseconds are merged into one run.'),
  })
  .describe('Settings of POST /hooks/JOB (docs/webhooks.md).');

export const triggerSchema = z
  .strictObject({
    webhook: z
      .union([z.boolean(), webhookSchema])
      .optional()
      .describe('true (or an object) lets the platform start a run for the rows it names: POST /hooks/JOB.'),
  })
  .describe('What starts a run besides a schedule and enqueue.');
