import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';

/**
 * A tiny platform for one worksheet whose answers a test scripts: batch creates that
 * refuse a whole batch holding a bad value (all-or-nothing, platform-notes §2 [U]),
 * that answer too few ids, or that apply and then drop the connection; updates of rows
 * deleted meanwhile (10007). Answers use the platform's shapes (platform-shapes §5, §7):
 * flat rows keyed by alias with `id`, `{rowIds}`, `{successfulRowIds, failedRowIds}`.
 */
export interface ScriptedPlatform {
  url: string;
  /** Rows by id: alias → value. */
  rows: Map<string, Record<string, unknown>>;
  /** Every request, in order: `METHOD path`. */
  requests: string[];
  script: {
    /** A value that makes a batch create (of any size) fail with 10002. */
    badValue?: string;
    /** The next N batch creates answer one id fewer than rows sent. */
    shortAnswers?: number;
    /** The next N batch creates are applied, then the connection is destroyed unanswered. */
    dropAfterApply?: number;
    /** Rows deleted just before their update arrives (after the writer read them): 10007. */
    vanishOnUpdate?: Set<string>;
    /** A value an update may not write: a batch update lists the rows as failed, a single one answers 10002. */
    badUpdateValue?: string;
    /** The next N updates (single or batch) are applied, then the connection is destroyed unanswered. */
    dropUpdateAfterApply?: number;
    /** The next N batch creates fail with 99999 (a transient failure) without applying. */
    failCreates?: number;
    /** Batch updates holding this value fail as a whole with 10002 (single updates are not affected). */
    refuseBatchUpdateValue?: string;
  };
  close(): Promise<void>;
}

const ok = (data: unknown) => ({ data, success: true, error_code: 1 });
const fail = (code: number, msg: string) => ({ success: false, error_code: code, error_msg: msg });

type FieldValue = { id: string; value: unknown };

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

function send(res: ServerResponse, payload: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(payload));
}

/** Values of an `eq` / `in` filter on one alias, at any depth of groups. */
function wanted(filter: unknown, out: Map<string, Set<string>> = new Map()): Map<string, Set<string>> {
  if (typeof filter !== 'object' || filter === null) return out;
  const f = filter as {
    type?: string;
    field?: string;
    operator?: string;
    value?: unknown;
    children?: unknown[];
  };
  if (f.type === 'group') for (const child of f.children ?? []) wanted(child, out);
  else if (f.field !== undefined) {
    const set = out.get(f.field) ?? new Set<string>();
    for (const v of Array.isArray(f.value) ? f.value : [f.value]) set.add(String(v));
    out.set(f.field, set);
  }
  return out;
}

export async function startScriptedPlatform(worksheetId: string): Promise<ScriptedPlatform> {
  const rows = new Map<string, Record<string, unknown>>();
  const requests: string[] = [];
  const script: ScriptedPlatform['script'] = {};
  const base = `/v3/app/worksheets/${worksheetId}/rows`;

  const server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? '').split('?')[0]!;
      requests.push(`${req.method} ${path}`);
      const input = await body(req);
      if (req.method === 'POST' && path === `${base}/batch`) {
        if ((script.failCreates ?? 0) > 0) {
          script.failCreates! -= 1;
          return send(res, fail(99999, 'data operation exception'));
        }
        const batch = (input.rows as Array<{ fields: FieldValue[] }>).map((r) =>
          Object.fromEntries(r.fields.map((f) => [f.id, f.value])),
        );
        const bad = batch.findIndex((r) => Object.values(r).includes(script.badValue));
        if (script.badValue !== undefined && bad >= 0)
          return send(res, fail(10002, `rows[${bad}]: value not allowed`));
        const ids = batch.map((r) => {
          const id = randomUUID();
          rows.set(id, r);
          return id;
        });
        if ((script.dropAfterApply ?? 0) > 0) {
          script.dropAfterApply! -= 1;
          req.socket.destroy();
          return;
        }
        if ((script.shortAnswers ?? 0) > 0) {
          script.shortAnswers! -= 1;
          return send(res, ok({ rowIds: ids.slice(1) }));
        }
        return send(res, ok({ rowIds: ids }));
      }
      if (req.method === 'POST' && path === `${base}/list`) {
        const filters = wanted(input.filter);
        const match = [...rows].filter(([id, r]) =>
          [...filters].every(([field, values]) => values.has(field === 'rowid' ? id : String(r[field]))),
        );
        const size = Number(input.pageSize ?? 1000);
        const page = match.slice(
          (Number(input.pageIndex ?? 1) - 1) * size,
          Number(input.pageIndex ?? 1) * size,
        );
        return send(res, ok({ rows: page.map(([id, r]) => ({ id, ...r })) }));
      }
      const dropUpdate = () => {
        if ((script.dropUpdateAfterApply ?? 0) <= 0) return false;
        script.dropUpdateAfterApply! -= 1;
        req.socket.destroy();
        return true;
      };
      if (req.method === 'PATCH' && path === `${base}/batch`) {
        const ids = input.rowIds as string[];
        const fields = input.fields as FieldValue[];
        if (
          script.refuseBatchUpdateValue !== undefined &&
          fields.some((f) => f.value === script.refuseBatchUpdateValue)
        ) {
          return send(res, fail(10002, 'value not allowed'));
        }
        for (const id of ids) if (script.vanishOnUpdate?.has(id) === true) rows.delete(id);
        const refused = fields.some(
          (f) => f.value === script.badUpdateValue && script.badUpdateValue !== undefined,
        );
        const failed = ids.filter((id) => !rows.has(id) || (refused && ids.indexOf(id) === 0));
        for (const id of ids)
          if (!failed.includes(id))
            Object.assign(rows.get(id)!, Object.fromEntries(fields.map((f) => [f.id, f.value])));
        if (dropUpdate()) return;
        return send(
          res,
          ok({ successfulRowIds: ids.filter((id) => !failed.includes(id)), failedRowIds: failed }),
        );
      }
      if (req.method === 'PATCH' && path.startsWith(`${base}/`)) {
        const id = path.slice(base.length + 1);
        if (script.vanishOnUpdate?.has(id) === true) rows.delete(id);
        const row = rows.get(id);
        if (row === undefined) return send(res, fail(10007, 'record does not exist or was deleted'));
        const fields = input.fields as FieldValue[];
        if (script.badUpdateValue !== undefined && fields.some((f) => f.value === script.badUpdateValue)) {
          return send(res, fail(10002, 'value not allowed'));
        }
        Object.assign(row, Object.fromEntries(fields.map((f) => [f.id, f.value])));
        if (dropUpdate()) return;
        return send(res, ok({ id }));
      }
      if (req.method === 'GET' && path === '/v3/users/lookup') return send(res, ok({ users: [] }));
      return send(res, fail(10001, `no route ${req.method} ${path}`));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    rows,
    requests,
    script,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
