/** Loads a seed (seed-schema.ts) into an empty state. */
import type { UserRef } from './wire-types.ts';
import { createOAuthClient, createPersonalToken } from './credentials.ts';
import type { EmulatorDeps } from './deps.ts';
import { located } from './rows/field-values.ts';
import { createRow } from './rows/row-writer.ts';
import { parseSeed } from './seed-schema.ts';
import type { EmulatorSeed } from './seed-schema.ts';
import { createApp } from './state/app-model.ts';
import { adminUser } from './state/create-state.ts';
import { createWorksheet } from './worksheets/worksheet-model.ts';
import { OPTION_FIELD_TYPES } from './field-kinds.ts';

function userRef(deps: EmulatorDeps, accountId: string | undefined, where: string): UserRef {
  if (accountId === undefined) return adminUser(deps.state);
  const user = deps.state.users.get(accountId);
  if (user === undefined) throw new Error(`seed ${where}: ${accountId} is not a member (see "users")`);
  return { accountId: user.accountId, fullname: user.fullname };
}

export function applySeed(deps: EmulatorDeps, raw: EmulatorSeed, source = 'seed'): void {
  const seed = parseSeed(raw, source);
  const state = deps.state;
  if (seed.org !== undefined) state.org.name = seed.org.name;
  for (const d of seed.departments ?? []) {
    const id = d.id ?? deps.ids.objectId();
    state.departments.set(id, { id, name: d.name, parentId: d.parentId ?? null });
  }
  for (const u of seed.users ?? []) {
    const accountId = u.accountId ?? deps.ids.uuid();
    state.users.set(accountId, {
      accountId,
      fullname: u.fullname,
      email: u.email,
      mobile: u.mobile ?? '',
      departmentIds: u.departmentIds ?? [],
    });
  }

  seed.apps.forEach((a, ai) => {
    const app = createApp(
      deps,
      { id: a.id, name: a.name, appKey: a.appKey, sign: a.sign },
      userRef(deps, a.owner, `apps[${ai}].owner`),
    );
    (a.worksheets ?? []).forEach((w, wi) => {
      const where = `${source} apps[${ai}].worksheets[${wi}]`;
      const ws = createWorksheet(deps, app, { name: w.name, alias: w.alias, fields: w.fields }, where, w.id);
      (w.rows ?? []).forEach((row, ri) => {
        const { id, ...values } = row;
        const fields = Object.entries(values).map(([key, value]) => {
          const field = ws.byKey.get(key);
          // Seeds may name options by their text, as field-value type "2" allows.
          return field !== undefined && OPTION_FIELD_TYPES.has(field.type)
            ? { id: key, value, type: '2' }
            : { id: key, value };
        });
        located(`${where}.rows[${ri}]`, () =>
          // Seeded rows stand for rows people entered: the app's owner wrote and owns them.
          createRow(
            deps,
            ws,
            fields,
            { by: app.owner, owner: app.owner },
            typeof id === 'string' ? id : undefined,
          ),
        );
      });
    });
  });

  const appId = (ref: string, where: string): string => {
    if (state.apps.has(ref)) return ref;
    const byName = [...state.apps.values()].find((app) => app.name === ref);
    if (byName === undefined)
      throw new Error(`${source} ${where}: "${ref}" is neither an app id nor an app name of the seed`);
    return byName.id;
  };
  (seed.personalTokens ?? []).forEach((t, i) => {
    const appIds = t.appIds.map((ref) => appId(ref, `personalTokens[${i}].appIds`));
    createPersonalToken(state, deps.ids, appIds, userRef(deps, t.user, `personalTokens[${i}].user`), t.token);
  });
  (seed.oauthClients ?? []).forEach((c, i) => {
    const appIds = c.appIds.map((ref) => appId(ref, `oauthClients[${i}].appIds`));
    createOAuthClient(state, deps.ids, appIds, userRef(deps, c.user, `oauthClients[${i}].user`), c);
  });
}
