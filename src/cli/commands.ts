import type { CliCommand } from './io.ts';

/** Command name → lazy loader, so `rowbridge validate` does not load BullMQ. */
export const commands: Record<string, () => Promise<CliCommand>> = {
  validate: () => import('./validate.ts'),
  check: () => import('./check.ts'),
  plan: () => import('./plan.ts'),
  run: () => import('./run.ts'),
  enqueue: () => import('./enqueue.ts'),
  cancel: () => import('./cancel.ts'),
  worker: () => import('./worker.ts'),
  status: () => import('./status.ts'),
  dlq: () => import('./dlq.ts'),
  dashboard: () => import('./dashboard.ts'),
  emulator: () => import('./emulator.ts'),
  hooks: () => import('./hooks.ts'),
  cdc: () => import('./cdc.ts'),
  conflicts: () => import('./conflicts.ts'),
  deletes: () => import('./deletes.ts'),
  links: () => import('./links.ts'),
  start: () => import('./start.ts'),
  singer: () => import('./singer.ts'),
  notify: () => import('./notify.ts'),
};

const SUMMARY: Record<string, string> = {
  validate: 'validate JOB                        check a job spec',
  check:
    'check [JOB] [--json]                reach the platform, authenticate, list worksheets; with JOB its\n' +
    '                                      worksheet, mapping, one page of rows and the time zone',
  plan: 'plan JOB [--json]                   dry run: what a run would create, update, delete',
  run: 'run JOB [--json] [--force]          run a job now, in this process (exit 0 ok, 2 dead letters, 1 failure)',
  enqueue:
    'enqueue JOB [--from X --to Y]       queue a run (or a backfill of a cursor range) for the workers',
  cancel: 'cancel RUN [--abandon]              stop a run cleanly: resumable, or given up with --abandon',
  worker:
    'worker [--concurrency N]            work queued runs; registers the schedules of jobs/;\n' +
    '                                      --ops-port N serves /metrics, /healthz, /readyz (--dashboard too)',
  status: 'status [RUN] [--json]               runs and their reports',
  dlq: 'dlq list|show|export|replay|purge   the dead-letter store; export writes CSV to fix and replay --file',
  dashboard: 'dashboard [--port N] [--host H]     runs, dead letters, queues, /metrics, /healthz, /readyz',
  emulator: 'emulator [--port N] [--seed FILE]   start the local API v3 emulator',
  hooks:
    'hooks serve|show JOB                receive webhook calls (POST /hooks/JOB); print the workflow settings',
  conflicts:
    'conflicts list|show|resolve         two-way conflicts waiting for a person; resolve ID --take ...',
  deletes: 'deletes list|approve|reject JOB     two-way deletes held back over the threshold',
  links: 'links export JOB --csv              which table record each worksheet row is linked to',
  cdc: 'cdc setup|check|status|drop JOB     PostgreSQL change capture: publication, slot, lag (docs/cdc.md)',
  start: 'start                               the quickstart: emulator, sample worksheet, example import',
  singer:
    "singer JOB                          write a Singer tap's output (stdin); print each STATE once safe",
  notify: 'notify test JOB                     send a test notification to each channel; print each answer',
};

/** The text of `rowbridge --help`: every command with its synopsis; `command` as the user typed it. */
export function usage(command = 'rowbridge'): string {
  const lines = Object.keys(commands).map((name) => `  ${SUMMARY[name] ?? name}`);
  return `usage: ${command} <command> [options]\n\ncommands:\n${lines.join('\n')}\n\n${command} <command> --help lists a command's options; ${command} --version prints the version.\n`;
}
