import { createApiClient } from './create-api-client.ts';
import type { ApiClient, ApiClientOptions } from './create-api-client.ts';
import { createAppsResource } from './resources/apps.ts';
import type { AppsResource } from './resources/apps.ts';
import { createChatbotsResource } from './resources/chatbots.ts';
import type { ChatbotsResource } from './resources/chatbots.ts';
import { createKnowledgeResource } from './resources/knowledge.ts';
import type { KnowledgeResource } from './resources/knowledge.ts';
import { createLookupsResource } from './resources/lookups.ts';
import type { LookupsResource } from './resources/lookups.ts';
import { createOptionsetsResource } from './resources/optionsets.ts';
import type { OptionsetsResource } from './resources/optionsets.ts';
import { createRolesResource } from './resources/roles.ts';
import type { RolesResource } from './resources/roles.ts';
import { createRowsResource } from './resources/rows.ts';
import type { RowsResource } from './resources/rows.ts';
import { createTodosResource } from './resources/todos.ts';
import type { TodosResource } from './resources/todos.ts';
import { createUsersResource } from './resources/users.ts';
import type { UsersResource } from './resources/users.ts';
import { createViewsResource } from './resources/views.ts';
import type { ViewsResource } from './resources/views.ts';
import { createWorkflowsResource } from './resources/workflows.ts';
import type { WorkflowsResource } from './resources/workflows.ts';
import { createWorksheetsResource } from './resources/worksheets.ts';
import type { WorksheetsResource } from './resources/worksheets.ts';

/** What the client knows of the organisation behind the platform. */
export interface Organisation {
  /**
   * IANA zone the platform keeps its clock in: timestamps without a zone
   * (`_updatedAt: "2025-03-18 16:02:11"`, platform-shapes §3 [C] format, [U] zone) are
   * read in it, and Date/DateTime/Time values are written as its wall clock.
   * @defaultValue 'Asia/Shanghai' (the public platform)
   */
  timeZone: string;
  /** Sent as `orgId` with organisation lookups; personal and OAuth tokens need it [L]. */
  orgId?: string | undefined;
}

/** The public platform's organisation zone. */
export const DEFAULT_PLATFORM_TIMEZONE = 'Asia/Shanghai';

/**
 * The platform client: the core (rate limiter, auth, retries, stats) plus one typed
 * method per endpoint of API v3 (spec §4), grouped by resource.
 */
export interface PlatformClient extends Pick<
  ApiClient,
  'call' | 'auth' | 'limiter' | 'stats' | 'serverTime' | 'close'
> {
  users: UsersResource;
  apps: AppsResource;
  worksheets: WorksheetsResource;
  rows: RowsResource;
  views: ViewsResource;
  workflows: WorkflowsResource;
  todos: TodosResource;
  chatbots: ChatbotsResource;
  roles: RolesResource;
  knowledge: KnowledgeResource;
  lookups: LookupsResource;
  optionsets: OptionsetsResource;
  organisation: Organisation;
}

/** Builds the core client from `options` and binds every resource to its `call`. */
export function createPlatformClient(
  options: ApiClientOptions & { organisation?: Partial<Organisation> | undefined },
): PlatformClient {
  const { organisation, ...clientOptions } = options;
  const core = createApiClient(clientOptions);
  const { call } = core;
  return {
    call,
    auth: core.auth,
    limiter: core.limiter,
    // The core mutates its stats object in place: hand out that object, not a copy.
    stats: core.stats,
    serverTime: () => core.serverTime(),
    close: () => core.close(),
    users: createUsersResource(call),
    apps: createAppsResource(call),
    worksheets: createWorksheetsResource(call),
    rows: createRowsResource(call),
    views: createViewsResource(call),
    workflows: createWorkflowsResource(call),
    todos: createTodosResource(call),
    chatbots: createChatbotsResource(call),
    roles: createRolesResource(call),
    knowledge: createKnowledgeResource(call),
    lookups: createLookupsResource(call, organisation?.orgId),
    optionsets: createOptionsetsResource(call),
    organisation: {
      timeZone: organisation?.timeZone ?? DEFAULT_PLATFORM_TIMEZONE,
      ...(organisation?.orgId === undefined ? {} : { orgId: organisation.orgId }),
    },
  };
}
