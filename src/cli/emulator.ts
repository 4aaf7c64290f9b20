/**
 * `rowbridge emulator [--port N] [--host H] [--seed FILE] [--dialect platform|spec]`:
 * runs the local API v3 emulator until SIGINT/SIGTERM. It prints the lines a user
 * exports to point rowbridge at it (ROWBRIDGE_API_URL without /v3, the header prefix,
 * the app key and sign): the emulator's own demo credentials (from the seed file, or
 * generated).
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseSeed } from '../emulator/seed-schema.ts';
import type { EmulatorSeed } from '../emulator/seed-schema.ts';
import { startEmulator } from '../emulator/start-emulator.ts';
import type { EmulatorHandle } from '../emulator/start-emulator.ts';
import { UsageError } from './args.ts';
import { defineCommand, parseCommand, usageFailure } from './command.ts';
import type { CliIo } from './io.ts';
import { EXIT } from './io.ts';

const EMULATOR = defineCommand({
  name: 'emulator',
  usage: ['emulator [--port N] [--host HOST] [--seed FILE] [--dialect platform|spec]'],
  description: 'Serves API v3 locally until Ctrl+C, and prints the lines to export to point rowbridge at it.',
  options: {
    port: { type: 'string', value: 'N', help: 'TCP port (default 8080; 0 picks a free one)' },
    host: { type: 'string', value: 'HOST', help: 'interface to listen on (default 127.0.0.1)' },
    seed: {
      type: 'string',
      value: 'FILE',
      help: 'JSON seed: apps, worksheets, rows, tokens (see jobs/examples/emulator-seed.json\nand src/emulator/seed-schema.ts)',
    },
    dialect: {
      type: 'string',
      value: 'D',
      help:
        '"platform" (default): the public platform\'s forms (worksheetId, flat rows keyed\n' +
        'by alias, HAP- headers, zone-less Asia/Shanghai timestamps); "spec": the seed\n' +
        "spec's forms (api-v3.md: rows with a fields array, APP- headers)",
    },
    'row-shape': { type: 'string', value: 'S', help: 'override the row shape: "fields" or "flat"' },
  },
});

/** The checked options, or a UsageError naming the bad one. */
function checkOptions(values: { port?: string; dialect?: string; 'row-shape'?: string }) {
  const port = Number(values.port ?? '8080');
  if (!/^\d+$/.test(values.port ?? '8080') || port > 65535)
    throw new UsageError(`--port must be an integer from 0 to 65535, got "${values.port}"`);
  const dialect = values.dialect ?? 'platform';
  if (dialect !== 'platform' && dialect !== 'spec')
    throw new UsageError(`--dialect must be "platform" or "spec", got "${dialect}"`);
  const rowShape = values['row-shape'];
  if (rowShape !== undefined && rowShape !== 'fields' && rowShape !== 'flat')
    throw new UsageError(`--row-shape must be "fields" or "flat", got "${rowShape}"`);
  return { port, dialect, rowShape } as const;
}

async function loadSeed(file: string, cwd: string): Promise<EmulatorSeed> {
  const path = resolve(cwd, file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(
      `cannot read seed file ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      { cause: error },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`seed file ${path} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  return parseSeed(json, `seed file ${path}`);
}

/** The lines a user pastes into a shell to point rowbridge at one app of the emulator. */
function exportLines(emulator: EmulatorHandle, appKey: string, sign: string): string[] {
  return [
    `  export ROWBRIDGE_API_URL=${emulator.url}`,
    `  export ROWBRIDGE_HEADER_PREFIX=${emulator.headerPrefix}`,
    `  export ROWBRIDGE_APPKEY=${appKey}`,
    `  export ROWBRIDGE_SIGN=${sign}`,
  ];
}

function describeSeeded(emulator: EmulatorHandle, seed: EmulatorSeed): string[] {
  const lines: string[] = [];
  const apps = emulator.state.apps();
  seed.apps.forEach((app, i) => {
    const live = apps[i];
    lines.push(
      `app "${app.name}" id ${live?.id ?? '?'}: to use it,`,
      ...exportLines(emulator, app.appKey, app.sign),
    );
    for (const wsId of live?.worksheetIds ?? []) {
      const ws = emulator.state.worksheet(wsId);
      lines.push(
        `  worksheet "${ws?.name ?? ''}" id ${wsId}${ws?.alias ? ` alias ${ws.alias}` : ''} (${emulator.state.rowCount(wsId)} rows)`,
      );
    }
  });
  for (const t of seed.personalTokens ?? [])
    lines.push(`personal token for ${t.appIds.join(', ')}: ${t.token}`);
  for (const c of seed.oauthClients ?? []) {
    lines.push(
      `OAuth client for ${c.appIds.join(', ')}: client_id=${c.clientId} client_secret=${c.clientSecret} refresh_token=${c.refreshToken}`,
    );
  }
  return lines;
}

function createDemo(emulator: EmulatorHandle): string[] {
  const app = emulator.createApp({ name: 'Demo' });
  const ws = emulator.createWorksheet(app.appId, {
    name: 'Customers',
    alias: 'customers',
    fields: [
      { name: 'Name', alias: 'name', type: 'Text', isTitle: true, required: true },
      { name: 'Email', alias: 'email', type: 'Email', isUnique: true },
      {
        name: 'Status',
        alias: 'status',
        type: 'SingleSelect',
        options: [
          { value: 'Lead', index: 1 },
          { value: 'Customer', index: 2 },
        ],
      },
    ],
  });
  const token = emulator.createPersonalToken([app.appId]);
  const oauth = emulator.createOAuthClient([app.appId]);
  return [
    `app "Demo" id ${app.appId}: to use it,`,
    ...exportLines(emulator, app.appKey, app.sign),
    `  worksheet "Customers" id ${ws.id} alias customers`,
    `personal token for Demo: ${token}`,
    `OAuth client for Demo: client_id=${oauth.clientId} client_secret=${oauth.clientSecret} refresh_token=${oauth.refreshToken}`,
  ];
}

function waitForSignal(): Promise<string> {
  return new Promise((done) => {
    const stop = (signal: string) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      done(signal);
    };
    const onInt = () => stop('SIGINT');
    const onTerm = () => stop('SIGTERM');
    process.once('SIGINT', onInt);
    process.once('SIGTERM', onTerm);
  });
}

export async function main(args: string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(EMULATOR, args, io);
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  let checked;
  try {
    checked = checkOptions(values);
  } catch (err) {
    return usageFailure(EMULATOR, err, io);
  }
  const { port, dialect, rowShape } = checked;

  let emulator: EmulatorHandle;
  let seed: EmulatorSeed | undefined;
  try {
    seed = values.seed === undefined ? undefined : await loadSeed(values.seed, io.cwd);
    emulator = await startEmulator({
      port,
      host: values.host ?? '127.0.0.1',
      dialect,
      ...(rowShape === undefined ? {} : { rowShape }),
      ...(seed === undefined ? {} : { seed }),
    });
  } catch (error) {
    io.err(`emulator: ${(error as Error).message}`);
    return EXIT.failure;
  }
  const credentials = seed === undefined ? createDemo(emulator) : describeSeeded(emulator, seed);
  io.out(
    [
      `rowbridge emulator (${emulator.dialect} dialect) listening on ${emulator.url}`,
      `  API:            ${emulator.url}/v3/... (ROWBRIDGE_API_URL is the part before /v3)`,
      `  token endpoint: ${emulator.tokenUrl}`,
      ...credentials,
      'Stop with Ctrl+C.',
    ].join('\n'),
  );
  const signal = await waitForSignal();
  io.err(`emulator: ${signal} received, stopping`);
  await emulator.close();
  return EXIT.ok;
}
