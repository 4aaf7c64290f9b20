import { AnswerShapeError, describeKeys } from '../answers/answer-shape-error.ts';
import { parseWorksheetList } from '../answers/parse-worksheet-list.ts';
import type { WorksheetListItem } from '../answers/parse-worksheet-list.ts';
import { parseWorksheetStructure, STRUCTURE_ID_KEYS } from '../answers/parse-worksheet-structure.ts';
import { asRecord, firstId } from '../answers/read-loose.ts';
import type { CallFn } from '../create-api-client.ts';
import type { CreateWorksheetInput, FieldDefinition, WorksheetStructure } from '../types.ts';
import { answerRef, buildOperation } from './build-operation.ts';
import type { JsonObject, RequestOptions } from './build-operation.ts';
import { pathSegment } from './path-segment.ts';

/** Body of `POST /v3/app/worksheets/list` (platform-shapes §4 [C]). */
export interface ListWorksheetsBody {
  /** `md` answers one Markdown table; both forms are parsed. @defaultValue 'json' */
  responseFormat?: 'json' | 'md';
  /** Restricts the list to these worksheet ids. */
  worksheets?: string[];
}

/** Body of the structure update `POST /v3/app/worksheets/{worksheet_id}` (platform-shapes §11 [C]). */
export interface UpdateStructureBody {
  addFields?: FieldDefinition[];
  /** Fields to change, each with its `id`. */
  editFields?: Array<Partial<FieldDefinition> & { id: string }>;
  /** Ids of the fields to remove. */
  removeFields?: string[];
  [key: string]: unknown;
}

/** The answer of create worksheet: `{worksheetId}` [C]. */
export interface CreatedWorksheet {
  id: string;
}

/** The worksheet endpoints (platform-shapes §4). */
export interface WorksheetsResource {
  /** `POST /v3/app/worksheets/list` (a read): the JSON and the Markdown form. */
  list(body?: ListWorksheetsBody, options?: RequestOptions): Promise<WorksheetListItem[]>;
  /** `POST /v3/app/worksheets`: the new worksheet's id (answer key `worksheetId`, or `id`). */
  create(input: CreateWorksheetInput, options?: RequestOptions): Promise<CreatedWorksheet>;
  /** `GET /v3/app/worksheets/{worksheet_id}?responseFormat=json`: the structure, parsed (id from `worksheetId ?? id`). */
  get(worksheetId: string, options?: RequestOptions): Promise<WorksheetStructure>;
  /** `POST /v3/app/worksheets/{worksheet_id}` with `addFields`, `editFields`, `removeFields`. */
  updateStructure(
    worksheetId: string,
    body: UpdateStructureBody | JsonObject,
    options?: RequestOptions,
  ): Promise<unknown>;
  /** `DELETE /v3/app/worksheets/{worksheet_id}`. */
  delete(worksheetId: string, options?: RequestOptions): Promise<unknown>;
}

export function createWorksheetsResource(call: CallFn): WorksheetsResource {
  const one = (where: string, worksheetId: string) =>
    `/v3/app/worksheets/${pathSegment(`worksheets.${where}`, 'worksheetId', worksheetId)}`;
  return {
    async list(body, options) {
      const op = buildOperation('POST', '/v3/app/worksheets/list', false, { body }, options);
      return parseWorksheetList(await call(op), answerRef('worksheets.list', op));
    },
    async create(input, options) {
      const op = buildOperation('POST', '/v3/app/worksheets', true, { body: input }, options);
      const data = await call(op);
      const found = firstId(asRecord(data) ?? {}, STRUCTURE_ID_KEYS);
      if (found === undefined) {
        // The worksheet was probably created: a caller must look it up, not create it again.
        throw new AnswerShapeError(
          answerRef('worksheets.create', op),
          `no worksheet id under "worksheetId" or "id"; ${describeKeys(data)}`,
          'ambiguous',
        );
      }
      return { id: found.id };
    },
    async get(worksheetId, options) {
      // Asked for explicitly: the Markdown form (responseFormat md) carries no field ids.
      const query = { responseFormat: 'json' };
      const op = buildOperation('GET', one('get', worksheetId), false, { query }, options);
      return parseWorksheetStructure(await call(op), answerRef('worksheets.get', op));
    },
    async updateStructure(worksheetId, body, options) {
      return call(buildOperation('POST', one('updateStructure', worksheetId), true, { body }, options));
    },
    async delete(worksheetId, options) {
      return call(buildOperation('DELETE', one('delete', worksheetId), true, {}, options));
    },
  };
}
