import type { CallFn } from '../create-api-client.ts';
import { buildOperation } from './build-operation.ts';
import type { JsonObject, RequestOptions } from './build-operation.ts';

/** Chatbots (spec §4 "Chatbot"). The payload is not shown in the spec. */
export interface ChatbotsResource {
  /** `POST /v3/app/chatbots`. */
  create(body: JsonObject, options?: RequestOptions): Promise<unknown>;
}

export function createChatbotsResource(call: CallFn): ChatbotsResource {
  return {
    create: async (body, options) =>
      call(buildOperation('POST', '/v3/app/chatbots', true, { body }, options)),
  };
}
