/**
 * Applications: creation with the plausible starting content a new platform app has
 * (a section, two roles, an option set, a knowledge base, a published approval process
 * with one pending to-do), and deletion with everything it owns.
 */
import type { UserRef } from '../wire-types.ts';
import type { EmulatorDeps } from '../deps.ts';
import { isoNow } from '../deps.ts';
import { EmulatorError } from '../emulator-error.ts';
import type { AppRecord } from './records.ts';

export interface NewApp {
  name: string;
  id?: string | undefined;
  appKey?: string | undefined;
  sign?: string | undefined;
  description?: string | undefined;
}

function seedContent(deps: EmulatorDeps, app: AppRecord): void {
  const ids = deps.ids;
  const at = isoNow(deps);
  app.sections.push({ id: ids.objectId(), name: 'Main', parentId: '', items: [] });
  for (const [name, description] of [
    ['Administrators', 'Manage the application'],
    ['Members', 'Use the application'],
  ] as const) {
    const id = ids.objectId();
    app.roles.set(id, {
      id,
      name,
      description,
      permissionWay: name === 'Administrators' ? 100 : 80,
      memberIds: new Set(name === 'Administrators' ? [app.owner.accountId] : []),
      departmentIds: new Set(),
      createdAt: at,
    });
  }
  const optionSetId = ids.objectId();
  app.optionSets.set(optionSetId, {
    id: optionSetId,
    name: 'Priority',
    isActive: true,
    createdAt: at,
    options: ['High', 'Medium', 'Low'].map((value, i) => ({
      key: ids.uuid(),
      value,
      index: i + 1,
      isDeleted: false,
    })),
  });
  const kbId = ids.objectId();
  app.knowledgeBases.set(kbId, {
    id: kbId,
    name: 'Product handbook',
    description: 'How the team works',
    createdAt: at,
    documents: [
      { name: 'returns.md', content: 'Customers may return goods within 30 days with the receipt.' },
      { name: 'shipping.md', content: 'Orders ship within two working days; express shipping costs extra.' },
    ],
  });
  const workflowId = ids.objectId();
  const processId = ids.objectId();
  app.workflows.set(workflowId, {
    id: workflowId,
    name: 'Purchase approval',
    worksheetId: '',
    triggerType: 'webhook',
    nodes: [
      { id: ids.objectId(), name: 'Start', type: 'start', prevId: '', config: {} },
      {
        id: ids.objectId(),
        name: 'Manager approval',
        type: 'approval',
        prevId: '',
        config: { approvers: [app.owner.accountId] },
      },
    ],
    published: true,
    processId,
    createdAt: at,
  });
  app.processes.set(processId, {
    id: processId,
    name: 'Purchase approval',
    workflowId,
    enabled: true,
    createdAt: at,
  });
  const instanceId = ids.objectId();
  app.instances.set(instanceId, {
    id: instanceId,
    processId,
    title: 'Purchase approval: 3 laptops',
    status: 'pending',
    initiatedBy: app.owner,
    assignees: [app.owner.accountId],
    payload: { amount: 3600 },
    opinions: [],
    urgeCount: 0,
    createdAt: at,
  });
}

export function createApp(deps: EmulatorDeps, input: NewApp, owner: UserRef): AppRecord {
  const state = deps.state;
  // The platform's app ids are UUIDs (platform-shapes §3 [C]); the seed spec's were 24-hex.
  const id = input.id ?? (deps.options.dialect === 'platform' ? deps.ids.uuid() : deps.ids.objectId());
  if (state.apps.has(id)) throw new EmulatorError(10006, `application ${id} already exists`);
  const appKey = input.appKey ?? deps.ids.secret(8);
  if (state.credentials.appKeys.has(appKey))
    throw new EmulatorError(10006, 'an application with this app key already exists');
  const app: AppRecord = {
    id,
    name: input.name,
    description: input.description ?? '',
    iconUrl: '',
    color: '#2196F3',
    appKey,
    sign: input.sign ?? deps.ids.secret(32),
    owner,
    createdAt: isoNow(deps),
    sections: [],
    worksheetIds: [],
    customPages: new Map(),
    workflows: new Map(),
    processes: new Map(),
    instances: new Map(),
    roles: new Map(),
    chatbots: new Map(),
    knowledgeBases: new Map(),
    optionSets: new Map(),
  };
  seedContent(deps, app);
  state.apps.set(id, app);
  state.credentials.appKeys.set(appKey, id);
  return app;
}

/** Deletes the app, its worksheets and its key; tokens that named it get 10007 from then on. */
export function deleteApp(deps: EmulatorDeps, app: AppRecord): void {
  for (const id of app.worksheetIds) deps.state.worksheets.delete(id);
  deps.state.credentials.appKeys.delete(app.appKey);
  deps.state.apps.delete(app.id);
}

/** The organisation the emulator's apps belong to. */
const ORGANIZATION_ID = 'a3d9e1f4-6b2c-4f8e-8a71-0c5e9d2b4f16';

/**
 * The app as the platform answers `GET /v3/app` (platform-shapes §4 [C]): sections with
 * typed items (0 worksheet, 1 custom page, 2 sub-group) and child sections. Worksheets
 * created without a section sit in one section of their own.
 */
export function platformAppView(deps: EmulatorDeps, app: AppRecord): Record<string, unknown> {
  const worksheetItem = (id: string) => {
    const ws = deps.state.worksheets.get(id);
    return { id, name: ws?.name ?? '', type: 0, iconUrl: '', status: 1, alias: ws?.alias ?? '', notes: '' };
  };
  const listed = new Set(
    app.sections.flatMap((s) => s.items.filter((i) => i.type === 'worksheet').map((i) => i.id)),
  );
  const section = (s: (typeof app.sections)[number]): Record<string, unknown> => ({
    id: s.id,
    name: s.name,
    items: s.items.map((i) =>
      i.type === 'worksheet'
        ? worksheetItem(i.id)
        : { id: i.id, name: i.name, type: 1, iconUrl: '', status: 1, alias: '', notes: '' },
    ),
    childSections: app.sections.filter((c) => c.parentId === s.id).map(section),
  });
  const loose = app.worksheetIds.filter((id) => !listed.has(id)).map(worksheetItem);
  const sections = app.sections.filter((s) => s.parentId === '').map(section);
  if (loose.length > 0)
    sections.unshift({
      id: `${app.id.slice(0, 20)}0000`,
      name: 'Worksheets',
      items: loose,
      childSections: [],
    });
  return {
    organizationId: ORGANIZATION_ID,
    appId: app.id,
    name: app.name,
    iconUrl: app.iconUrl,
    color: app.color,
    desc: app.description,
    remark: '',
    sections,
  };
}

export function appView(deps: EmulatorDeps, app: AppRecord): Record<string, unknown> {
  return {
    id: app.id,
    name: app.name,
    description: app.description,
    iconUrl: app.iconUrl,
    color: app.color,
    owner: app.owner,
    createdAt: app.createdAt,
    sections: app.sections.map((s) => ({
      id: s.id,
      name: s.name,
      parentId: s.parentId,
      items: s.items.map((i) => ({ ...i })),
    })),
    worksheets: app.worksheetIds.map((wsId) => {
      const ws = deps.state.worksheets.get(wsId);
      return { id: wsId, name: ws?.name ?? '', alias: ws?.alias ?? '' };
    }),
  };
}
