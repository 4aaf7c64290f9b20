import type { CallFn } from '../create-api-client.ts';
import { buildOperation } from './build-operation.ts';
import type { JsonObject, RequestOptions } from './build-operation.ts';
import { pathSegment } from './path-segment.ts';

/** Views, statistical charts and custom pages (spec §4). Payloads are not shown in the spec. */
export interface ViewsResource {
  /** `POST /v3/app/worksheets/{worksheet_id}/views/batch`. */
  createViews(worksheetId: string, body: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `POST /v3/app/worksheets/{worksheet_id}/charts`. */
  createChart(worksheetId: string, body: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `PUT /v3/app/custom-pages/{page_id}`: replaces the whole page; what is not sent is cleared. */
  updateCustomPage(pageId: string, body: JsonObject, options?: RequestOptions): Promise<unknown>;
}

export function createViewsResource(call: CallFn): ViewsResource {
  const sheet = (where: string, worksheetId: string) =>
    `/v3/app/worksheets/${pathSegment(`views.${where}`, 'worksheetId', worksheetId)}`;
  return {
    createViews: async (worksheetId, body, options) =>
      call(
        buildOperation('POST', `${sheet('createViews', worksheetId)}/views/batch`, true, { body }, options),
      ),
    createChart: async (worksheetId, body, options) =>
      call(buildOperation('POST', `${sheet('createChart', worksheetId)}/charts`, true, { body }, options)),
    updateCustomPage: async (pageId, body, options) => {
      const path = `/v3/app/custom-pages/${pathSegment('views.updateCustomPage', 'pageId', pageId)}`;
      return call(buildOperation('PUT', path, true, { body }, options));
    },
  };
}
