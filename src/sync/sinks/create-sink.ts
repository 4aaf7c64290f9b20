/** The one entry point of the sinks: picks the writer for a job's `sink:` spec. */
import { createCsvSink } from './csv-sink.ts';
import { createNdjsonSink } from './ndjson-sink.ts';
import { createPostgresSink } from './postgres-sink.ts';
import type { Sink, SinkDeps, SinkSpec } from './sink-spec.ts';

/** Creates the sink of a job; nothing is opened or connected before the first write. */
export function createSink(spec: SinkSpec, deps: SinkDeps): Sink {
  switch (spec.type) {
    case 'postgres':
      return createPostgresSink(spec, deps);
    case 'csv':
      return createCsvSink(spec, deps);
    case 'ndjson':
      return createNdjsonSink(spec, deps);
  }
}
