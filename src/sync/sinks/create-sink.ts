/** The one entry point of the sinks: picks the writer for a job's `sink:` spec. */
import { createCsvSink } from './csv-sink.ts';
import { createNdjsonSink } from './ndjson-sink.ts';
import type { Sink, SinkDeps, SinkSpec } from './sink-spec.ts';

/** Creates the sink of a job; nothing is opened or connected before the first write. */
export function createSink(spec: SinkSpec, deps: SinkDeps): Sink {
  switch (spec.type) {
    case 'postgres':
      // pg loads only for a job that writes to a database (a worker's start stays light).
      return lazySink(async () => (await import('./postgres-sink.ts')).createPostgresSink(spec, deps));
    case 'csv':
      return createCsvSink(spec, deps);
    case 'ndjson':
      return createNdjsonSink(spec, deps);
  }
}

/** A sink whose module is imported on the first write; closing or aborting an unopened one is a no-op. */
function lazySink(open: () => Promise<Sink>): Sink {
  let opened: Promise<Sink> | undefined;
  return {
    async write(records) {
      opened ??= open();
      await (await opened).write(records);
    },
    async close() {
      if (opened !== undefined) await (await opened).close();
    },
    async abort() {
      if (opened !== undefined) await (await opened).abort();
    },
  };
}
