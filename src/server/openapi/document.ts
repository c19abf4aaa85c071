import { z } from 'zod';
import { errorTable, type ErrorCode } from '../../errors.js';
import type { ApiResponse, ApiRoute } from './api-routes.js';
import { ErrorBodySchema } from './api-schemas.js';

// The OpenAPI 3.1 document of the /api routes, made from the route table (api-routes.ts)
// and zod's own JSON Schema output: the schemas in it are the ones that validate requests.
// Named schemas (the card, the session…) land once in components.schemas and are referred to.

type JsonSchema = Record<string, unknown>;

/** Schemas that appear under their own name in components.schemas wherever they are used. */
export type NamedSchemas = Record<string, z.ZodType>;

class Components {
  readonly schemas: Record<string, JsonSchema> = {};
  private readonly registry = z.registry<{ id: string }>();

  constructor(named: NamedSchemas) {
    for (const [id, schema] of Object.entries(named)) this.registry.add(schema, { id });
  }

  /** The JSON Schema of `schema`, its named parts moved to components and referred to. */
  schema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const out = z.toJSONSchema(schema, { metadata: this.registry, target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
    const { $schema: _dialect, $defs, ...rest } = out;
    for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) this.schemas[id] ??= relink(def);
    return relink(rest);
  }
}

/** zod names its definitions #/$defs/X; in the document they live at #/components/schemas/X. */
function relink(schema: JsonSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema;
}

const SECURITY = { public: [], token: [{ bearer: [] }, { cookie: [] }], human: [{ bearer: [] }, { cookie: [] }], operator: [{ bearer: [] }, { cookie: [] }] } as const;

function parameters(route: ApiRoute, components: Components) {
  const path = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  const query = Object.entries(route.query?.shape ?? {}).map(([name, field]) => {
    const schema = components.schema(field as z.ZodType, 'input');
    const { description, ...rest } = schema;
    return { name, in: 'query', required: !(field as z.ZodType).safeParse(undefined).success, schema: rest, ...(description ? { description } : {}), ...exampleOf(route.example?.query?.[name], rest) };
  });
  const headers = Object.entries(route.example?.headers ?? {}).map(([name, example]) => ({ name, in: 'header', required: false, schema: { type: 'string' }, example }));
  return [...path, ...query, ...headers];
}

/** A query example as its schema types it (the table gives the wire's text). */
const exampleOf = (text: string | undefined, schema: JsonSchema) =>
  text === undefined ? {} : { example: schema.type === 'number' || schema.type === 'integer' ? Number(text) : text };

function content(response: ApiResponse, components: Components) {
  if (!response.schema) return { description: response.description };
  return { description: response.description, content: { [response.contentType ?? 'application/json']: { schema: components.schema(response.schema, 'output') } } };
}

/** The error responses by status, each naming its codes. */
function errorResponses(codes: ErrorCode[], auth: ApiRoute['auth'], components: Components) {
  const all = new Set<ErrorCode>([...codes, ...(auth === 'public' ? [] : (['unauthorized'] as const)), ...(auth === 'human' || auth === 'operator' ? (['human_only'] as const) : []), ...(auth === 'operator' ? (['operator_only'] as const) : [])]);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of all) byStatus.set(errorTable[code], [...(byStatus.get(errorTable[code]) ?? []), code]);
  const schema = { $ref: '#/components/schemas/Error' };
  components.schemas.Error ??= components.schema(ErrorBodySchema, 'output');
  return Object.fromEntries([...byStatus].sort(([a], [b]) => a - b).map(([status, list]) => [status, { description: `\`${list.join('`, `')}\``, content: { 'application/json': { schema } } }]));
}

export function openApiDocument(routes: ApiRoute[], { version, named }: { version: string; named: NamedSchemas }) {
  const components = new Components(named);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const operation = {
      operationId: `${route.method}${route.path.replace(/^\/api/, '').replace(/[{}]/g, '').split(/[/._-]/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join('')}`,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.tag],
      security: SECURITY[route.auth],
      parameters: parameters(route, components),
      ...(route.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: components.schema(route.body, 'input'), ...(route.example?.body !== undefined ? { example: route.example.body } : {}) } } } }
        : {}),
      responses: { ...Object.fromEntries(Object.entries(route.ok).map(([status, r]) => [status, content(r, components)])), ...errorResponses(route.errors ?? [], route.auth, components) },
    };
    (paths[route.path] ??= {})[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'askrelay',
      version,
      description: 'The relay\'s HTTP API: agents\' questions as cards, answered by a human or another agent. docs/api.md explains every route in prose.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: components.schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'The relay token (ASKRELAY_TOKEN or <data>/token), or a session\'s agent token.' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'askrelay_session', description: 'The page\'s login (POST /api/login); changes made with it must come from the relay\'s own origin.' },
      },
    },
  };
}

export type OpenApiDocument = ReturnType<typeof openApiDocument>;
