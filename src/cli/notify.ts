/**
 * `rowbridge notify test JOB` (issue 27 §1): sends a test notification to each channel of
 * the job (ROWBRIDGE_NOTIFY's and its own `notify:`, whatever events they listen for) and
 * prints each answer, one line per channel: its name, where it was written, its type and
 * the HTTP status or the error. A channel's URL is never printed: a chat platform's
 * webhook URL is its credential. Nothing is queued and nothing is kept in Redis.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadSettings } from '../../config/settings.ts';
import { withoutUrls } from '../ground/mask-secrets.ts';
import { loadJobSpec } from '../sync/job-spec/load-job-spec.ts';
import { notifyChannels } from '../sync/notify/notify-channels.ts';
import { jobLink } from '../sync/notify/notification-payload.ts';
import { sendNotification } from '../sync/notify/send-notification.ts';
import { defineCommand, helpText, parseCommand } from './command.ts';
import { EXIT } from './io.ts';
import type { CliIo } from './io.ts';
import { jobFileIn } from './job-file.ts';
import { resolveJobArg } from './open-runtime.ts';
import { reportFailure } from './report-failure.ts';

const TEST = defineCommand({
  name: 'notify test',
  usage: ['notify test JOB'],
  description:
    'Sends a test notification to each channel of JOB (ROWBRIDGE_NOTIFY and its notify:) and prints\n' +
    "each channel's answer; URLs are never printed. Exit 0 when every channel answered 2xx, 1 otherwise.",
  options: {},
  positionals: { min: 1, max: 1, label: 'JOB' },
});

const USAGE = 'usage: rowbridge notify test JOB\n';

export async function main(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'test') return test(rest, io);
  if (sub === undefined || sub === '--help' || sub === '-h') {
    io.out(helpText(TEST));
    return sub === undefined ? EXIT.usage : EXIT.ok;
  }
  io.err(`rowbridge notify: unknown subcommand "${sub}"\n${USAGE}`);
  return EXIT.usage;
}

async function test(args: string[], io: CliIo): Promise<number> {
  const parsed = parseCommand(TEST, args, io);
  if (typeof parsed === 'number') return parsed;
  try {
    const settings = loadSettings(io.env);
    const arg = resolveJobArg(parsed.positionals[0]!, io);
    const file = jobFileIn(arg.jobsDir ?? settings.jobsDir ?? path.join(io.cwd, 'jobs'), arg.name);
    const spec = await loadJobSpec(file);
    const channels = notifyChannels(spec.notify, io.env);
    if (channels.length === 0) {
      io.err(
        `rowbridge notify test: job ${spec.name} has no channels: add notify: to ${file} or set ROWBRIDGE_NOTIFY`,
      );
      return EXIT.failure;
    }
    const link = jobLink(settings.dashboardUrl, spec.name);
    const payload = {
      event: 'test' as const,
      job: spec.name,
      at: new Date().toISOString(),
      ...(link === undefined ? {} : { link }),
    };
    let failed = 0;
    for (const named of channels) {
      const name = `${named.id} ${named.where} (${named.channel.type})`;
      try {
        const answer = await sendNotification(named, payload, `test-${randomUUID()}`, io.env);
        io.out(`${name}: HTTP ${answer.status}`);
      } catch (err) {
        failed += 1;
        // The error already names the channel by where it was written.
        const message = withoutUrls((err as Error).message).replace(
          `${named.where} (${named.channel.type})`,
          '',
        );
        io.out(`${name}: ${message.replace(/^:?\s*/, '')}`);
      }
    }
    io.out(
      failed === 0
        ? `every channel (${channels.length}) took the test notification`
        : `${failed} of ${channels.length} channels did not take the test notification`,
    );
    return failed === 0 ? EXIT.ok : EXIT.failure;
  } catch (err) {
    return reportFailure(err, io);
  }
}
