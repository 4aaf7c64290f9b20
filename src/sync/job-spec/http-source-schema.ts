/** The http source: a URL, its headers and query, pagination, timeouts and rate limit. */
import { z } from 'zod';
import { itemsPath } from './file-source-schemas.ts';
import { credentialSafeMap, intRange, nonEmptyString } from './schema-checks.ts';
import { rateLimit } from './rate-limit-schema.ts';

const pagination = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('page'),
    pageParam: nonEmptyString.optional(),
    sizeParam: nonEmptyString.optional(),
    pageSize: intRange(1, 10_000).optional(),
    startPage: intRange(0, 1_000_000).optional(),
  }),
  z.strictObject({
    type: z.literal('cursor'),
    cursorParam: nonEmptyString.describe('Query parameter the next cursor is sent in.'),
    cursorPath: nonEmptyString.describe('Dot path to the next cursor in a response.'),
  }),
  z.strictObject({ type: z.literal('none') }),
]);

export const httpSource = z.strictObject({
  type: z.literal('http'),
  url: z
    .string()
    .superRefine((url, ctx) => {
      let parsed: URL | undefined;
      try {
        parsed = new URL(url.replace(/\$\{[A-Z_][A-Z0-9_]*\}/g, 'x'));
      } catch {
        parsed = undefined;
      }
      if (parsed === undefined || !['http:', 'https:'].includes(parsed.protocol)) {
        ctx.addIssue({ code: 'custom', message: 'must be an absolute http:// or https:// URL' });
      } else if (parsed.username !== '' || parsed.password !== '') {
        // Not echoed: the user:password part is the secret.
        ctx.addIssue({
          code: 'custom',
          message:
            'must not contain a user name or password: send credentials in a header such as Authorization: "Bearer ${ENV_NAME}"',
        });
      }
    })
    .describe('Absolute http(s) URL; ${ENV_NAME} references are replaced from the environment.'),
  method: z.enum(['GET', 'POST']).optional(),
  headers: credentialSafeMap('header').optional().describe('Credentials only as ${ENV_NAME} references.'),
  query: credentialSafeMap('query').optional(),
  itemsPath: itemsPath.optional(),
  pagination: pagination.optional(),
  maxPages: intRange(1, 1_000_000).optional(),
  connectTimeoutMs: intRange(1, 600_000)
    .optional()
    .describe('Longest wait in ms for the connection, TLS included (default 10000).'),
  headersTimeoutMs: intRange(1, 3_600_000)
    .optional()
    .describe('Longest wait in ms for the response headers of a request (default 60000).'),
  bodyTimeoutMs: intRange(1, 3_600_000)
    .optional()
    .describe('Longest pause in ms between two pieces of a response body (default 60000).'),
  maxResponseBytes: intRange(1, 8 * 1024 ** 3)
    .optional()
    .describe('Largest response body in bytes; a larger one fails the read (default 268435456, 256 MiB).'),
  rateLimit: rateLimit.optional(),
});
