/**
 * Spec §4 "Chatbot" and "Vector knowledge base", plus emulator extras so a client can
 * read, list and delete what it creates. Chatbot `{name, description?, prompt?,
 * knowledgeBaseIds?}` → `{id}`; knowledge base `{name, description?, documents?: [{name,
 * content}]}` → `{id}`; search `{query, knowledgeBaseId?, topK?}` → passages ranked by
 * how many query words they contain (a stand-in for vector similarity).
 */
import type { EmulatorDeps } from '../deps.ts';
import { isoNow } from '../deps.ts';
import { notFound, paramError } from '../emulator-error.ts';
import { asObject, asString, bodyObject, optionalArray, optionalInteger, optionalString } from '../input.ts';
import type { AppRouteContext, Route } from '../router.ts';

export function createKnowledgeRoutes(deps: EmulatorDeps): Route[] {
  const chatbot = (ctx: AppRouteContext) => {
    const id = ctx.params['chatbot_id'] ?? '';
    const found = ctx.app.chatbots.get(id);
    if (found === undefined) throw notFound(`chatbot ${id} does not exist`);
    return found;
  };
  const knowledgeBase = (ctx: AppRouteContext, id: string) => {
    const found = ctx.app.knowledgeBases.get(id);
    if (found === undefined) throw notFound(`knowledge base ${id} does not exist`);
    return found;
  };
  const summary = (kb: ReturnType<typeof knowledgeBase>) => ({
    id: kb.id,
    name: kb.name,
    description: kb.description,
    documentCount: kb.documents.length,
    createdAt: kb.createdAt,
  });
  return [
    {
      method: 'POST',
      path: '/app/chatbots',
      scope: 'app',
      handler: (ctx) => {
        const body = bodyObject(ctx.body);
        const knowledgeBaseIds = optionalArray(body['knowledgeBaseIds'], 'knowledgeBaseIds').map(
          (id, i) => knowledgeBase(ctx, asString(id, `knowledgeBaseIds[${i}]`)).id,
        );
        const id = deps.ids.objectId();
        ctx.app.chatbots.set(id, {
          id,
          name: asString(body['name'], 'name'),
          description: optionalString(body['description'], 'description'),
          prompt: optionalString(body['prompt'], 'prompt'),
          knowledgeBaseIds,
          createdAt: isoNow(deps),
        });
        return { id };
      },
    },
    { method: 'GET', path: '/app/chatbots', scope: 'app', handler: (ctx) => [...ctx.app.chatbots.values()] },
    { method: 'GET', path: '/app/chatbots/{chatbot_id}', scope: 'app', handler: (ctx) => chatbot(ctx) },
    {
      method: 'DELETE',
      path: '/app/chatbots/{chatbot_id}',
      scope: 'app',
      handler: (ctx) => {
        ctx.app.chatbots.delete(chatbot(ctx).id);
        return {};
      },
    },
    {
      method: 'POST',
      path: '/app/knowledge/list',
      scope: 'app',
      write: false,
      handler: (ctx) => {
        const keywords = optionalString(bodyObject(ctx.body)['keywords'], 'keywords').toLowerCase();
        return [...ctx.app.knowledgeBases.values()]
          .filter((kb) => kb.name.toLowerCase().includes(keywords))
          .map(summary);
      },
    },
    {
      method: 'POST',
      path: '/app/knowledge/search',
      scope: 'app',
      write: false,
      handler: (ctx) => {
        const body = bodyObject(ctx.body);
        const words = asString(body['query'], 'query')
          .toLowerCase()
          .split(/\W+/)
          .filter((w) => w.length > 1);
        const only = optionalString(body['knowledgeBaseId'], 'knowledgeBaseId');
        const topK = optionalInteger(body['topK'], 'topK') ?? 5;
        if (topK < 1) throw paramError(`topK must be at least 1, got ${topK}`);
        const bases = only === '' ? [...ctx.app.knowledgeBases.values()] : [knowledgeBase(ctx, only)];
        return bases
          .flatMap((kb) =>
            kb.documents.map((doc) => {
              const text = doc.content.toLowerCase();
              const hits = words.filter((w) => text.includes(w)).length;
              return {
                knowledgeBaseId: kb.id,
                documentName: doc.name,
                content: doc.content,
                score: words.length === 0 ? 0 : hits / words.length,
              };
            }),
          )
          .filter((r) => r.score > 0)
          .sort((a, b) => b.score - a.score)
          .slice(0, topK);
      },
    },
    {
      method: 'POST',
      path: '/app/knowledge',
      scope: 'app',
      handler: (ctx) => {
        const body = bodyObject(ctx.body);
        const documents = optionalArray(body['documents'], 'documents').map((raw, i) => {
          const doc = asObject(raw, `documents[${i}]`);
          return {
            name: asString(doc['name'], `documents[${i}].name`),
            content: asString(doc['content'], `documents[${i}].content`),
          };
        });
        const id = deps.ids.objectId();
        ctx.app.knowledgeBases.set(id, {
          id,
          name: asString(body['name'], 'name'),
          description: optionalString(body['description'], 'description'),
          documents,
          createdAt: isoNow(deps),
        });
        return { id };
      },
    },
    {
      method: 'GET',
      path: '/app/knowledge/{knowledge_id}',
      scope: 'app',
      handler: (ctx) => ({
        ...summary(knowledgeBase(ctx, ctx.params['knowledge_id'] ?? '')),
        documents: knowledgeBase(ctx, ctx.params['knowledge_id'] ?? '').documents,
      }),
    },
    {
      method: 'DELETE',
      path: '/app/knowledge/{knowledge_id}',
      scope: 'app',
      handler: (ctx) => {
        ctx.app.knowledgeBases.delete(knowledgeBase(ctx, ctx.params['knowledge_id'] ?? '').id);
        return {};
      },
    },
  ];
}
