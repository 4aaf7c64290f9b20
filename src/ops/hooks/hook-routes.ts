/**
 * `POST /hooks/JOB`: a webhook call names rows that changed; rowbridge queues a hint for
 * a hint run (queue/hint-run.ts) and answers 202 once the hint is in Redis. The call is
 * answered from Redis alone, never waiting on the platform, so a throttled platform
 * does not slow the answer. The answer waits for one Redis round trip on a connection of
 * its own (so it never queues behind a run's traffic on the shared one); the hint run is
 * queued after it. Any Host is accepted: the platform calls by whatever public
 * name it was given, and each call carries its own credential (a DNS-rebinding page has
 * none, and cannot send Authorization or webhook-* headers cross-origin without a
 * preflight, which this route never answers).
 */
import { carrierFromHeaders, inSpan, RUN_ATTRIBUTES } from '../../ground/tracing.ts';
import { randomUUID } from 'node:crypto';
import express from 'express';
import { Cluster } from 'ioredis';
import type { NextFunction, Request, Response, Router } from 'express';
import { ConfigError } from '../../ground/errors.ts';
import { createHookInbox } from '../../queue/hook-inbox.ts';
import type { HookCall } from '../../queue/hook-inbox.ts';
import { queueHintRun } from '../../queue/hint-run.ts';
import { createQueues } from '../../queue/queues.ts';
import type { Runtime } from '../../queue/runtime-types.ts';
import type { RedisClient } from '../../sync/state/redis-types.ts';
import { hookHintKind, hookTriggerOf } from '../../sync/job-spec/hook-trigger.ts';
import type { HookTrigger } from '../../sync/job-spec/hook-trigger.ts';
import type { JobSpec } from '../../sync/job-spec/job-spec-schema.ts';
import { HookBodyError, MAX_HOOK_BODY_BYTES, parseHookBody } from './hook-body.ts';
import { checkHookCall, hookCredentialsOf } from './hook-credentials.ts';
import type { HookMetrics } from './hook-metrics.ts';

/** The answer comes within this time even when Redis is slow (the platform waits 10 s). */
const ANSWER_WITHIN_MS = 8000;
/** A job file is read again at most this often. */
const SPEC_CACHE_MS = 2000;
/** Job names remembered (unknown names too: each is one entry). */
const SPEC_CACHE_SIZE = 1000;
/** Longest delivery id kept. */
const MAX_DELIVERY_ID = 200;

/** Options of {@link createHookRoutes}. */
export interface HookRoutesOptions {
  rt: Runtime;
  metrics?: HookMetrics | undefined;
}

/** The hook endpoint, to mount on an express app; `close` releases its queue handle. */
export interface HookRoutes {
  router: Router;
  close(): Promise<void>;
}

interface HookJob {
  spec: JobSpec;
  trigger: HookTrigger;
}

interface CachedJob {
  at: number;
  job: Promise<HookJob | undefined>;
  refreshing: boolean;
}

export function createHookRoutes(options: HookRoutesOptions): HookRoutes {
  const { rt, metrics } = options;
  const redis = acceptConnection(rt.redis);
  // Its errors are the shared connection's too, which logs them.
  redis.on('error', () => undefined);
  const inbox = createHookInbox({ redis, prefix: rt.statePrefix });
  const queues = createQueues(rt);
  const specs = new Map<string, CachedJob>();
  const scheduling = new Set<Promise<void>>();

  async function loadHookJob(name: string): Promise<HookJob | undefined> {
    try {
      const { spec } = await rt.loadJob(name);
      const trigger = hookTriggerOf(spec);
      return trigger === undefined ? undefined : { spec, trigger };
    } catch (err) {
      // An unknown name is a 404; a job file that does not load is the operator's to see.
      if (!(err instanceof ConfigError)) throw err;
      return undefined;
    }
  }

  /**
   * The job's spec, read once per SPEC_CACHE_MS: calls meanwhile take the one they have
   * while a single read refreshes it, so a busy endpoint neither waits for the file nor
   * parses it once per call.
   */
  function hookJob(name: string): Promise<HookJob | undefined> {
    const cached = specs.get(name);
    if (cached === undefined) {
      if (specs.size >= SPEC_CACHE_SIZE) specs.delete(specs.keys().next().value!);
      const entry: CachedJob = { at: performance.now(), job: loadHookJob(name), refreshing: false };
      specs.set(name, entry);
      // A read that failed (not a missing job) is tried again by the next call.
      entry.job.catch(() => specs.get(name) === entry && specs.delete(name));
      return entry.job;
    }
    if (!cached.refreshing && performance.now() - cached.at >= SPEC_CACHE_MS) {
      cached.refreshing = true;
      loadHookJob(name).then(
        (job) => specs.set(name, { at: performance.now(), job: Promise.resolve(job), refreshing: false }),
        (err: unknown) => {
          cached.refreshing = false;
          cached.at = performance.now();
          rt.logger.warn(
            { err, job: name },
            'hooks: the job file could not be read again; using the last read',
          );
        },
      );
    }
    return cached.job;
  }

  /**
   * Queues the hint run of hints already in Redis, after the call was answered. If that
   * fails the hints stay pending and the flag is dropped: the next call, or the job's
   * schedule, takes them (and a flag left by a dead process lapses, hook-inbox.ts).
   */
  function scheduleHintRun(job: string, runId: string, delayMs: number): void {
    const queuing: Promise<void> = queueHintRun(rt, queues.runs, job, runId, delayMs)
      .catch(async (err: unknown) => {
        await inbox.unschedule(job, runId).catch(() => undefined);
        rt.logger.warn(
          { err, job, runId },
          'hooks: the hint run could not be queued; its hints stay pending',
        );
      })
      .finally(() => scheduling.delete(queuing));
    scheduling.add(queuing);
  }

  const router = express.Router();
  router.post(
    '/hooks/:job',
    (req: Request, res: Response, next: NextFunction) => {
      const name = String(req.params.job);
      hookJob(name).then((job) => {
        if (job === undefined) {
          metrics?.refused('', 'unknown-job');
          res
            .status(404)
            .set('cache-control', 'no-store')
            .json({ error: `no job "${name.slice(0, 80)}" takes webhooks (trigger: { webhook: true })` });
          return;
        }
        res.locals.hookJob = job;
        next();
      }, next);
    },
    express.raw({ type: () => true, limit: MAX_HOOK_BODY_BYTES }),
    (req: Request, res: Response, next: NextFunction) => {
      accept(req, res).catch(next);
    },
  );
  router.use('/hooks', (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const type = (err as { type?: string } | null)?.type;
    if (res.headersSent || (type !== 'entity.too.large' && type !== 'request.aborted')) {
      next(err);
      return;
    }
    const job = res.locals.hookJob as HookJob | undefined;
    if (job !== undefined) metrics?.refused(job.spec.name, 'body');
    res
      .status(400)
      .set('cache-control', 'no-store')
      .json({ error: type === 'request.aborted' ? 'the body was cut off' : 'the body is over 1 MiB' });
  });

  /**
   * The call's span continues the caller's trace when it sends a W3C `traceparent`; the
   * hint run it queues carries that trace on (docs/tracing.md).
   */
  function accept(req: Request, res: Response): Promise<void> {
    const { spec } = res.locals.hookJob as HookJob;
    return inSpan(
      'rowbridge.hook',
      { [RUN_ATTRIBUTES.job]: spec.name, 'http.request.method': 'POST', 'http.route': '/hooks/:job' },
      async (span) => {
        await acceptCall(req, res);
        span.setAttribute('http.response.status_code', res.statusCode);
      },
      carrierFromHeaders(req.headers),
    );
  }

  async function acceptCall(req: Request, res: Response): Promise<void> {
    const { spec, trigger } = res.locals.hookJob as HookJob;
    const job = spec.name;
    metrics?.received(job);
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const given = (req.get('webhook-id') ?? req.get('x-rowbridge-delivery'))?.trim();
    const deliveryId = given === undefined || given === '' ? randomUUID() : given.slice(0, MAX_DELIVERY_ID);
    const call: HookCall = { at: new Date().toISOString(), deliveryId, status: 0, queued: 0 };
    const send = (status: number, payload: Record<string, unknown>) => {
      res.status(status).set('cache-control', 'no-store').json(payload);
      rt.logger.info({ job, deliveryId, status, queued: payload.queued }, 'hook');
    };

    const refusal = checkHookCall(hookCredentialsOf(trigger, rt.settings, rt.env), req.headers, body);
    if (refusal !== undefined) {
      metrics?.refused(job, 'auth');
      await inbox.refused(job, { ...call, status: 401, reason: refusal });
      send(401, { error: refusal });
      return;
    }
    let hint;
    try {
      hint = parseHookBody(body, hookHintKind(spec), deliveryId);
    } catch (err) {
      if (!(err instanceof HookBodyError)) throw err;
      metrics?.refused(job, 'body');
      await inbox.refused(job, { ...call, status: 400, reason: err.message });
      send(400, { error: err.message });
      return;
    }
    const queued = hint.tokens.length;
    const accepting = inbox.accept(job, given === undefined || given === '' ? undefined : deliveryId, hint, {
      ...call,
      status: 202,
      queued,
    });
    const answer = await withinTime(accepting);
    if (answer === 'late') {
      // Its hint may still reach Redis: its run is queued then all the same, or the flag
      // it raised would hold the job's hints back until it lapsed.
      accepting.then(
        (late) => {
          if (!late.duplicate && late.schedule !== undefined)
            scheduleHintRun(job, late.schedule, trigger.debounceMs);
        },
        () => undefined,
      );
      metrics?.refused(job, 'unavailable');
      send(503, {
        error:
          'Redis did not answer in time: the call may not be queued; send it again (the same delivery id is queued once)',
      });
    } else if (answer.duplicate) {
      metrics?.duplicate(job);
      send(200, { duplicate: true, deliveryId });
    } else {
      metrics?.queued(job, queued);
      send(202, { deliveryId, queued });
      if (answer.schedule !== undefined) scheduleHintRun(job, answer.schedule, trigger.debounceMs);
    }
  }

  return {
    router,
    async close() {
      await Promise.all(scheduling);
      await queues.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/**
 * The accept's one command goes on a connection of its own: on the shared one it would
 * wait behind whatever a run in this process has pipelined. Commands of calls answered
 * in the same turn of the event loop go out in one write (auto-pipelining): a write to
 * Redis, which wakes another process, was the accept's largest cost.
 */
function acceptConnection(shared: RedisClient): RedisClient {
  return shared instanceof Cluster
    ? shared.duplicate([], { enableAutoPipelining: true })
    : shared.duplicate({ enableAutoPipelining: true });
}

async function withinTime<T>(work: Promise<T>): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ANSWER_WITHIN_MS);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
