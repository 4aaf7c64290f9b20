/**
 * Counter, histogram and gauge registration on one prom-client registry. The process metrics
 * ({@link createMetrics}) and the webhook metrics both declare their series through it,
 * so the registry a series lands on and the shape of its declaration live in one place.
 *
 * @see ./metrics.ts
 * @see ./hooks/hook-metrics.ts
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';

/** Declares series on the registry given to {@link createMetricFactory}. */
export interface MetricFactory {
  /** A counter; without `labelNames` it has a single unlabelled series. */
  counter<T extends string = string>(name: string, help: string, labelNames?: readonly T[]): Counter<T>;
  histogram<T extends string>(
    name: string,
    help: string,
    labelNames: readonly T[],
    buckets: number[],
  ): Histogram<T>;
  /** A gauge whose values `collect` sets at each scrape (read from where they live, not kept). */
  gauge<T extends string>(
    name: string,
    help: string,
    labelNames: readonly T[],
    collect: (gauge: Gauge<T>) => Promise<void>,
  ): Gauge<T>;
}

export function createMetricFactory(registry: Registry): MetricFactory {
  const registers = [registry];
  return {
    // prom-client copies the config over its defaults: an explicit `labelNames: undefined`
    // would replace the empty default, so the key is left out instead.
    counter: (name, help, labelNames) =>
      new Counter({ name, help, ...(labelNames !== undefined && { labelNames }), registers }),
    histogram: (name, help, labelNames, buckets) =>
      new Histogram({ name, help, labelNames, buckets, registers }),
    gauge<T extends string>(
      name: string,
      help: string,
      labelNames: readonly T[],
      collect: (gauge: Gauge<T>) => Promise<void>,
    ) {
      const gauge: Gauge<T> = new Gauge({ name, help, labelNames, registers, collect: () => collect(gauge) });
      return gauge;
    },
  };
}
