import type { CallFn } from '../create-api-client.ts';
import type { CreateWorksheetInput, WorksheetStructure } from '../types.ts';
import { buildOperation } from './build-operation.ts';
import type { JsonObject, RequestOptions } from './build-operation.ts';
import { pathSegment } from './path-segment.ts';

/** An element of the worksheet list's `data` (spec §2 "Worksheet list item"). */
export interface WorksheetListItem {
  id: string;
  name: string;
  remark: string;
}

/** The worksheet endpoints (spec §4 "Worksheet"). */
export interface WorksheetsResource {
  /** `POST /v3/app/worksheets/list` (a read; the body's filters are not shown in the spec). */
  list(body?: JsonObject, options?: RequestOptions): Promise<WorksheetListItem[]>;
  /** `POST /v3/app/worksheets`. */
  create(input: CreateWorksheetInput, options?: RequestOptions): Promise<unknown>;
  /** `GET /v3/app/worksheets/{worksheet_id}`: the structure with its fields. */
  get(worksheetId: string, options?: RequestOptions): Promise<WorksheetStructure>;
  /** `POST /v3/app/worksheets/{worksheet_id}/structure`. */
  updateStructure(worksheetId: string, body: JsonObject, options?: RequestOptions): Promise<unknown>;
  /** `DELETE /v3/app/worksheets/{worksheet_id}`. */
  delete(worksheetId: string, options?: RequestOptions): Promise<unknown>;
}

export function createWorksheetsResource(call: CallFn): WorksheetsResource {
  const one = (where: string, worksheetId: string) =>
    `/v3/app/worksheets/${pathSegment(`worksheets.${where}`, 'worksheetId', worksheetId)}`;
  return {
    list: async (body, options) =>
      call(buildOperation('POST', '/v3/app/worksheets/list', false, { body }, options)),
    create: async (input, options) =>
      call(buildOperation('POST', '/v3/app/worksheets', true, { body: input }, options)),
    get: async (worksheetId, options) =>
      call(buildOperation('GET', one('get', worksheetId), false, {}, options)),
    updateStructure: async (worksheetId, body, options) =>
      call(
        buildOperation('POST', `${one('updateStructure', worksheetId)}/structure`, true, { body }, options),
      ),
    delete: async (worksheetId, options) =>
      call(buildOperation('DELETE', one('delete', worksheetId), true, {}, options)),
  };
}
