/**
 * The seed format: what `startEmulator({seed})` and `rowbridge emulator --seed FILE`
 * load at start and after every `reset()`. Example: jobs/examples/emulator-seed.json.
 *
 * ```json
 * {
 *   "org": {"name": "Acme"},
 *   "users": [{"accountId": "…", "fullname": "Dana", "email": "dana@acme.test", "mobile": "13912342048", "departmentIds": []}],
 *   "departments": [{"id": "<uuid or 24 hex>", "name": "Ops", "parentId": "<its parent's id>"}],
 *   "apps": [{
 *     "id": "<24 hex, optional>", "name": "CRM", "appKey": "…", "sign": "…", "owner": "<accountId, optional>",
 *     "worksheets": [{
 *       "id": "<24 hex, optional>", "name": "Customers", "alias": "customers",
 *       "fields": [{"name": "Email", "alias": "email", "type": "Email", "required": true, "isUnique": true}],
 *       "rows": [{"id": "<row uuid, optional>", "email": "a@acme.test"}]
 *     }]
 *   }],
 *   "personalTokens": [{"token": "…", "appIds": ["CRM"], "user": "<accountId, optional>"}],
 *   "oauthClients": [{"clientId": "…", "clientSecret": "…", "refreshToken": "…", "appIds": ["CRM"]}]
 * }
 * ```
 *
 * Rows are keyed by field alias or id and use the write formats of platform notes §4;
 * select fields also take option text (as with field-value type "2"). Relations may
 * point at rows of worksheets seeded earlier, through their `id`. `appIds` entries are
 * app ids or app names. The default organisation (members, departments, regions of
 * state/create-state.ts) is always there; `users` and `departments` add to it.
 */
import { z } from 'zod';

const objectId = z.string().regex(/^[0-9a-f]{24}$/, 'must be a 24-hex object id');
// The platform's department ids are UUIDs (platform-shapes §3 [C]); older seeds use object ids.
const uuid = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'must be a UUID');

const fieldDefinition = z.looseObject({
  name: z.string().min(1),
  type: z.union([z.string().min(1), z.number()]),
  alias: z.string().optional(),
});

const worksheet = z.object({
  id: objectId.optional(),
  name: z.string().min(1),
  alias: z.string().optional(),
  fields: z.array(fieldDefinition).min(1),
  rows: z.array(z.record(z.string(), z.unknown())).optional(),
});

const app = z.object({
  id: objectId.optional(),
  name: z.string().min(1),
  appKey: z.string().min(1),
  sign: z.string().min(1),
  owner: z.string().optional(),
  worksheets: z.array(worksheet).optional(),
});

export const emulatorSeedSchema = z.object({
  org: z.object({ name: z.string().min(1) }).optional(),
  users: z
    .array(
      z.object({
        accountId: z.string().min(1).optional(),
        fullname: z.string().min(1),
        email: z.string().min(1),
        mobile: z.string().optional(),
        departmentIds: z.array(z.string()).optional(),
      }),
    )
    .optional(),
  departments: z
    .array(
      z.object({
        id: z.union([objectId, uuid]).optional(),
        name: z.string().min(1),
        parentId: z.string().optional(),
      }),
    )
    .optional(),
  apps: z.array(app),
  personalTokens: z
    .array(z.object({ token: z.string().min(8), appIds: z.array(z.string()), user: z.string().optional() }))
    .optional(),
  oauthClients: z
    .array(
      z.object({
        clientId: z.string().min(1),
        clientSecret: z.string().min(8),
        refreshToken: z.string().min(8),
        appIds: z.array(z.string()),
        user: z.string().optional(),
      }),
    )
    .optional(),
});

/** Initial content of an emulator (see the module comment for the format). */
export type EmulatorSeed = z.input<typeof emulatorSeedSchema>;

/** Checks a parsed seed file; the error names the file and every bad path. */
export function parseSeed(value: unknown, source: string): z.output<typeof emulatorSeedSchema> {
  const result = emulatorSeedSchema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues
    .map((issue) => `  ${issue.path.join('.') || '(root)'}: ${issue.message}`)
    .join('\n');
  throw new Error(`${source} is not a valid emulator seed:\n${problems}`);
}
