import type { EmulatorDeps } from '../deps.ts';
import type { Route } from '../router.ts';
import { createAppRoutes } from './app-routes.ts';
import { createKnowledgeRoutes } from './knowledge-routes.ts';
import { createLookupRoutes } from './lookup-routes.ts';
import { createOptionSetRoutes } from './optionset-routes.ts';
import { createRoleRoutes } from './role-routes.ts';
import { createRowExtraRoutes } from './row-extra-routes.ts';
import { createRowRoutes } from './row-routes.ts';
import { createTodoRoutes } from './todo-routes.ts';
import { createViewRoutes } from './view-routes.ts';
import { createWorkflowRoutes } from './workflow-routes.ts';
import { createWorksheetRoutes } from './worksheet-routes.ts';

/** Every endpoint of spec §4, plus the emulator's documented extras. */
export function createAllRoutes(deps: EmulatorDeps): Route[] {
  return [
    ...createAppRoutes(deps),
    ...createWorksheetRoutes(deps),
    ...createRowRoutes(deps),
    ...createRowExtraRoutes(deps),
    ...createViewRoutes(deps),
    ...createWorkflowRoutes(deps),
    ...createTodoRoutes(deps),
    ...createRoleRoutes(deps),
    ...createKnowledgeRoutes(deps),
    ...createOptionSetRoutes(deps),
    ...createLookupRoutes(deps),
  ];
}
