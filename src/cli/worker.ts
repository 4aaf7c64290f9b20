import { createWorkers } from '../queue/create-workers.ts';
import { registerSchedules } from '../queue/schedules.ts';
import { parseCliArgs, positiveInt } from './args.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { openRuntime } from './open-runtime.ts';
import { reportFailure } from './report-failure.ts';

const USAGE = 'usage: rowbridge worker [--concurrency N] [--no-schedules]';

/** `worker`: long-running; registers the schedules of jobs/ once, then works runs and batches until SIGTERM/SIGINT. */
export async function main(args: string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseCliArgs(args, { concurrency: { type: 'string' }, 'no-schedules': { type: 'boolean' } }, false);
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}`);
    return EXIT.usage;
  }
  const rt = openRuntime(io);
  try {
    const concurrency = positiveInt(parsed.values.concurrency, 'concurrency');
    if (parsed.values['no-schedules'] !== true) {
      const { registered, removed } = await registerSchedules(rt);
      rt.logger.info({ registered, removed }, 'schedules registered');
    }
    const workers = createWorkers(rt, concurrency === undefined ? {} : { concurrency });
    rt.logger.info({ concurrency: concurrency ?? 4 }, 'worker started');
    await new Promise<void>((resolve) => {
      const stop = (signal: string) => {
        rt.logger.info({ signal }, 'stopping: finishing in-flight batches');
        resolve();
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
    });
    await workers.close();
    return EXIT.ok;
  } catch (err) {
    return reportFailure(err, io);
  } finally {
    await rt.close();
  }
}
