/**
 * Spec §4 "User" and "Application management". Payloads the spec does not show:
 * create app `{name, description?}` → `{id, name}` (a token that creates an app may use
 * it at once; an app key stays bound to its own app); edit app `{name?, description?,
 * iconUrl?, color?}` → the app; sections `{sections: [{name, parentId?}]}` → `[{id, name}]`;
 * items `{items: [{sectionId, name, type: worksheet|customPage|link, url?}]}` →
 * `[{id, name, type}]` (a worksheet item creates a worksheet with one title field, a
 * customPage item a page for PUT /v3/app/custom-pages/{id}).
 */
import type { EmulatorDeps } from '../deps.ts';
import { isoNow } from '../deps.ts';
import { paramError } from '../emulator-error.ts';
import { asArray, asObject, asString, bodyObject, optionalString } from '../input.ts';
import type { Route } from '../router.ts';
import { appView, createApp, deleteApp, platformAppView } from '../state/app-model.ts';
import { createWorksheet } from '../worksheets/worksheet-model.ts';

const ITEM_TYPES = ['worksheet', 'customPage', 'link'] as const;

export function createAppRoutes(deps: EmulatorDeps): Route[] {
  return [
    {
      method: 'GET',
      path: '/orgs/list',
      scope: 'account',
      handler: () => [{ id: deps.state.org.id, name: deps.state.org.name }],
    },
    {
      method: 'GET',
      path: '/users/me',
      scope: 'account',
      handler: (ctx) => ({
        ...ctx.principal.user,
        email: deps.state.users.get(ctx.principal.user.accountId)?.email ?? '',
        orgId: deps.state.org.id,
      }),
    },
    {
      method: 'GET',
      path: '/apps/list',
      scope: 'account',
      handler: (ctx) =>
        [...ctx.principal.appIds]
          .map((id) => deps.state.apps.get(id))
          .filter((app) => app !== undefined)
          .map((app) => ({
            id: app.id,
            name: app.name,
            description: app.description,
            createdAt: app.createdAt,
          })),
    },
    {
      method: 'POST',
      path: '/apps',
      scope: 'account',
      handler: (ctx) => {
        const body = bodyObject(ctx.body);
        const app = createApp(
          deps,
          {
            name: asString(body['name'], 'name'),
            description: optionalString(body['description'], 'description'),
          },
          ctx.principal.user,
        );
        ctx.principal.grantApp?.(app.id);
        return { id: app.id, name: app.name };
      },
    },
    {
      method: 'GET',
      path: '/app',
      scope: 'app',
      handler: (ctx) =>
        deps.options.dialect === 'platform' ? platformAppView(deps, ctx.app) : appView(deps, ctx.app),
    },
    {
      method: 'POST',
      path: '/app',
      scope: 'app',
      handler: (ctx) => {
        const body = bodyObject(ctx.body);
        const app = ctx.app;
        if (body['name'] !== undefined) app.name = asString(body['name'], 'name');
        app.description = optionalString(body['description'], 'description', app.description);
        app.iconUrl = optionalString(body['iconUrl'], 'iconUrl', app.iconUrl);
        app.color = optionalString(body['color'], 'color', app.color);
        return appView(deps, app);
      },
    },
    {
      method: 'DELETE',
      path: '/app',
      scope: 'app',
      handler: (ctx) => {
        deleteApp(deps, ctx.app);
        return {};
      },
    },
    {
      method: 'POST',
      path: '/app/sections/batch',
      scope: 'app',
      handler: (ctx) =>
        asArray(bodyObject(ctx.body)['sections'], 'sections').map((raw, i) => {
          const input = asObject(raw, `sections[${i}]`);
          const parentId = optionalString(input['parentId'], `sections[${i}].parentId`);
          if (parentId !== '' && !ctx.app.sections.some((s) => s.id === parentId)) {
            throw paramError(`sections[${i}].parentId "${parentId}" is not a section of the application`);
          }
          const section = {
            id: deps.ids.objectId(),
            name: asString(input['name'], `sections[${i}].name`),
            parentId,
            items: [],
          };
          ctx.app.sections.push(section);
          return { id: section.id, name: section.name };
        }),
    },
    {
      method: 'POST',
      path: '/app/items/batch',
      scope: 'app',
      handler: (ctx) => {
        const items = asArray(bodyObject(ctx.body)['items'], 'items').map((raw, i) => {
          const where = `items[${i}]`;
          const input = asObject(raw, where);
          const sectionId = asString(input['sectionId'], `${where}.sectionId`);
          const section = ctx.app.sections.find((s) => s.id === sectionId);
          if (section === undefined)
            throw paramError(`${where}.sectionId "${sectionId}" is not a section of the application`);
          const type = asString(input['type'], `${where}.type`);
          if (!(ITEM_TYPES as readonly string[]).includes(type))
            throw paramError(`${where}.type "${type}" is not one of ${ITEM_TYPES.join(', ')}`);
          return {
            section,
            type,
            name: asString(input['name'], `${where}.name`),
            url: optionalString(input['url'], `${where}.url`),
          };
        });
        return items.map(({ section, type, name, url }) => {
          if (type === 'worksheet') {
            const ws = createWorksheet(deps, ctx.app, {
              name,
              sectionId: section.id,
              fields: [{ name: 'Title', type: 'Text', isTitle: true }],
            });
            return { id: ws.id, name, type };
          }
          const id = deps.ids.objectId();
          if (type === 'customPage')
            ctx.app.customPages.set(id, { id, name, components: [], createdAt: isoNow(deps) });
          section.items.push(url === '' ? { id, name, type } : { id, name, type, url });
          return { id, name, type };
        });
      },
    },
  ];
}
