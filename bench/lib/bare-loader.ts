import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';
import { Pool } from 'undici';

/** Where the bare loader writes: an emulator's URL, credentials and worksheet. */
export interface BareLoaderTarget {
  url: string;
  appKey: string;
  sign: string;
  headerPrefix: string;
  worksheetId: string;
}

/** What {@link bareLoad} did. */
export interface BareLoadResult {
  rows: number;
  requests: number;
  seconds: number;
}

interface StructureField {
  id: string;
  alias?: string;
  options?: Array<{ key: string; value: string }>;
}

function unwrap(json: unknown, what: string): unknown {
  const envelope = json as { success?: boolean; data?: unknown; error_msg?: string };
  if (envelope.success !== true)
    throw new Error(`bare loader: ${what} answered ${JSON.stringify(json).slice(0, 300)}`);
  return envelope.data;
}

/**
 * The baseline of bench/import.ts: what a hand-written loader with nothing but
 * csv-parse and undici does with the orders CSV of bench/lib/orders-fixture.ts. It reads
 * the worksheet structure once (for the status option keys), maps each line with the
 * fixture's rules (number, option key by case-insensitive text, DD/MM/YYYY → YYYY-MM-DD)
 * and posts `batchSize` rows per `POST .../rows/batch`, `concurrency` requests at once,
 * on one undici Pool. No queue, no Redis, no retries, no bookkeeping: the ceiling the
 * emulator allows a client on this machine.
 */
export async function bareLoad(
  target: BareLoaderTarget,
  csvFile: string,
  options: { batchSize: number; concurrency: number },
): Promise<BareLoadResult> {
  const pool = new Pool(target.url, { connections: options.concurrency, pipelining: 1 });
  const headers = {
    'content-type': 'application/json',
    [`${target.headerPrefix}Appkey`]: target.appKey,
    [`${target.headerPrefix}Sign`]: target.sign,
  };
  const base = `/v3/app/worksheets/${encodeURIComponent(target.worksheetId)}`;
  const started = performance.now();
  let requests = 0;
  try {
    const answer = await pool.request({ method: 'GET', path: `${base}?responseFormat=json`, headers });
    requests += 1;
    const structure = unwrap(await answer.body.json(), 'GET structure') as { fields: StructureField[] };
    // The field ids, as rowbridge writes them (ids outlive renamed aliases): the same bytes
    // in every batch as the run posts. Aliases would be about 80 KB less per 1,000 rows.
    const idOf = (alias: string): string => {
      const field = structure.fields.find((f) => f.alias === alias);
      if (field === undefined) throw new Error(`bare loader: the worksheet has no field ${alias}`);
      return field.id;
    };
    const ids = {
      orderNo: idOf('order_no'),
      customer: idOf('customer'),
      amount: idOf('amount'),
      status: idOf('status'),
      placed: idOf('placed'),
    };
    const statusKeys = new Map<string, string>();
    for (const o of structure.fields.find((f) => f.alias === 'status')?.options ?? [])
      statusKeys.set(o.value.toLowerCase(), o.key);

    const post = async (rows: unknown[]): Promise<void> => {
      const res = await pool.request({
        method: 'POST',
        path: `${base}/rows/batch`,
        headers,
        body: JSON.stringify({ rows, triggerWorkflow: false }),
      });
      requests += 1;
      const data = unwrap(await res.body.json(), 'POST rows/batch') as { rowIds?: unknown[] };
      if (data.rowIds?.length !== rows.length)
        throw new Error(`bare loader: ${rows.length} rows posted, ${data.rowIds?.length} ids back`);
    };

    const inFlight = new Set<Promise<void>>();
    let rows = 0;
    let batch: unknown[] = [];
    const send = async (): Promise<void> => {
      const p = post(batch).finally(() => inFlight.delete(p));
      inFlight.add(p);
      batch = [];
      if (inFlight.size >= options.concurrency) await Promise.race(inFlight);
    };
    const parser = createReadStream(csvFile).pipe(parse({ bom: true, from_line: 2 }));
    for await (const record of parser as AsyncIterable<string[]>) {
      const [orderNo, customer, total, status, date] = record;
      const [day, month, year] = (date ?? '').split('/');
      batch.push({
        fields: [
          { id: ids.orderNo, value: orderNo },
          { id: ids.customer, value: customer },
          { id: ids.amount, value: Number(total) },
          { id: ids.status, value: [statusKeys.get((status ?? '').toLowerCase())] },
          { id: ids.placed, value: `${year}-${month}-${day}` },
        ],
      });
      rows += 1;
      if (batch.length >= options.batchSize) await send();
    }
    if (batch.length > 0) await send();
    await Promise.all(inFlight);
    return { rows, requests, seconds: (performance.now() - started) / 1000 };
  } finally {
    await pool.close();
  }
}
