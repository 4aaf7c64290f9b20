#!/usr/bin/env node
/**
 * rowbridge command line. Each command lives in src/cli/<name>.ts and exports
 * `main(args, io)`, which resolves to the process exit code:
 * 0 success, 1 failure, 2 finished with dead-lettered rows (run), 64 usage error.
 * `rowbridge <command> --help` (or `rowbridge help <command>`) lists a command's options.
 */
import { commands, usage } from './cli/commands.ts';
import { version } from './cli/version.ts';
import { EXIT } from './cli/io.ts';
import { createCliIo } from './cli/io.ts';
import { createProcessTuning } from './cli/process-tuning.ts';
import type { ProcessTuning } from './cli/process-tuning.ts';
import { readSetting } from '../config/settings.ts';
import { tracingWanted } from './cli/tracing-wanted.ts';

const argv = process.argv.slice(2);
// `rowbridge help run` is `rowbridge run --help`.
const [name, ...args] = argv[0] === 'help' && argv[1] !== undefined ? [argv[1], '--help'] : argv;
const io = createCliIo();

if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
  io.out(usage(io.command));
  process.exitCode = name === undefined ? EXIT.usage : EXIT.ok;
} else if (name === '--version' || name === '-V' || name === 'version') {
  io.out(`rowbridge ${version()}`);
  process.exitCode = EXIT.ok;
} else {
  const load = commands[name];
  if (load === undefined) {
    io.err(`rowbridge: unknown command "${name}"\n\n${usage(io.command)}`);
    process.exitCode = EXIT.usage;
  } else {
    // Loading a command's modules would grow V8's young generation to its maximum and
    // bring in its optimizing compilers, both for good (./cli/process-tuning.ts).
    let tuning: ProcessTuning | undefined;
    try {
      tuning = createProcessTuning(readSetting('memory', process.env) ?? 'lean', [
        ...process.execArgv,
        process.env.NODE_OPTIONS ?? '',
      ]);
    } catch (err) {
      io.err(`rowbridge: ${(err as Error).message}`);
      process.exitCode = EXIT.usage;
    }
    if (tuning !== undefined) {
      const release = tuning.holdWhileStarting();
      const command = await load().finally(release);
      tuning.sizeHeap();
      // The SDK is imported only when OTEL_* variables ask for traces (docs/tracing.md).
      const stopTracing = tracingWanted(process.env)
        ? await (await import('./cli/tracing-setup.ts')).startTracing(process.env)
        : undefined;
      try {
        process.exitCode = await command.main(args, io, tuning);
      } finally {
        await stopTracing?.().catch((err: unknown) =>
          io.err(`rowbridge: traces not all exported: ${(err as Error).message}`),
        );
      }
    }
  }
}
