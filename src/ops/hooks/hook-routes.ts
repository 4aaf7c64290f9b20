/**
 * `POST /hooks/JOB`: a webhook call names rows that changed; rowbridge queues a hint for
 * a hint run (queue/hint-run.ts) and answers 202 once the hint is in Redis. The call is
 * answered from Redis alone, never waiting on the platform, so a throttled platform
 * does not slow the answer. Any Host is accepted: the platform calls by whatever public
 * name it was given, and each call carries its own credential (a DNS-rebinding page has
 * none, and cannot send Authorization or webhook-* headers cross-origin without a
 * preflight, which this route never answers).
 */
import { carrierFromHeaders, inSpan, RUN_ATTRIBUTES } from '../../ground/tracing.ts';
import { randomUUID } from 'node:crypto';
import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import { ConfigError } from '../../ground/errors.ts';
import { createHookInbox } from '../../queue/hook-inbox.ts';
import type { HookCall } from '../../queue/hook-inbox.ts';
import { queueHintRun } from '../../queue/hint-run.ts';
import { createQueues } from '../../queue/queues.ts';
import type { Runtime } from '../../queue/runtime.ts';
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

export function createHookRoutes(options: HookRoutesOptions): HookRoutes {
  const { rt, metrics } = options;
  const inbox = createHookInbox({ redis: rt.redis, prefix: rt.statePrefix });
  const queues = createQueues(rt);
  const specs = new Map<string, { at: number; job: HookJob | undefined }>();

  async function hookJob(name: string): Promise<HookJob | undefined> {
    const cached = specs.get(name);
    if (cached !== undefined && performance.now() - cached.at < SPEC_CACHE_MS) return cached.job;
    let job: HookJob | undefined;
    try {
      const { spec } = await rt.loadJob(name);
      const trigger = hookTriggerOf(spec);
      job = trigger === undefined ? undefined : { spec, trigger };
    } catch (err) {
      // An unknown name is a 404; a job file that does not load is the operator's to see.
      if (!(err instanceof ConfigError)) throw err;
      job = undefined;
    }
    specs.set(name, { at: performance.now(), job });
    return job;
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
    const answer = await withinTime(
      (async () => {
        const accepted = await inbox.accept(
          job,
          given === undefined || given === '' ? undefined : deliveryId,
          hint,
          {
            ...call,
            status: 202,
            queued,
          },
        );
        if (accepted.duplicate) return 'duplicate' as const;
        if (accepted.schedule !== undefined) {
          try {
            await queueHintRun(rt, queues.runs, job, accepted.schedule, trigger.debounceMs);
          } catch (err) {
            // The hints stay pending: the next call, or the job's schedule, takes them.
            await inbox.unschedule(job, accepted.schedule).catch(() => undefined);
            throw err;
          }
        }
        return 'queued' as const;
      })(),
    );
    if (answer === 'late') {
      metrics?.refused(job, 'unavailable');
      send(503, {
        error:
          'Redis did not answer in time: the call may not be queued; send it again (the same delivery id is queued once)',
      });
    } else if (answer === 'duplicate') {
      metrics?.duplicate(job);
      send(200, { duplicate: true, deliveryId });
    } else {
      metrics?.queued(job, queued);
      send(202, { deliveryId, queued });
    }
  }

  return {
    router,
    close: () => queues.close(),
  };
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
