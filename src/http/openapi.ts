/**
 * The OpenAPI document is generated from the route schemas (zod → JSON Schema), served at
 * /openapi.json with Swagger UI at /docs, and checked in as openapi/openapi.yaml.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import YAML from 'yaml';

function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
    dir = path.dirname(dir);
  }
  return '0.0.0';
}

type OpenApiDoc = ReturnType<typeof jsonSchemaTransformObject>;

/**
 * The zod provider emits an input and an output variant of every named schema; drop the variants
 * no route refers to (our named schemas are response-only) so the document lists each once.
 */
function dropUnusedComponents(doc: OpenApiDoc): OpenApiDoc {
  const schemas = (doc as { components?: { schemas?: Record<string, unknown> } }).components?.schemas;
  if (!schemas) return doc;
  const text = JSON.stringify(doc);
  for (const name of Object.keys(schemas)) {
    if (name.endsWith('Input') && !text.includes(`"#/components/schemas/${name}"`)) delete schemas[name];
  }
  return doc;
}

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'ProbNES Server',
        version: packageVersion(),
        description:
          'Optimisation as a service: ask for points to evaluate, report their values, and the server updates its search distribution. ' +
          'Errors are application/problem+json with a stable `code`.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      tags: [
        { name: 'studies', description: 'Optimisation problems and their configuration.' },
        { name: 'loop', description: 'The suggest/observe loop: get points, report results, manage leases.' },
        { name: 'trials', description: 'Points handed out for evaluation and their outcomes.' },
        { name: 'results', description: 'Best point, regret history and the current search distribution.' },
        { name: 'operations', description: 'Probes and documentation.' },
      ],
    },
    transform: jsonSchemaTransform,
    transformObject: (doc) => dropUnusedComponents(jsonSchemaTransformObject(doc)),
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

/** The document as YAML, exactly as `npm run openapi` writes it. */
export function openApiYaml(app: FastifyInstance): string {
  return YAML.stringify(app.swagger(), { lineWidth: 0, aliasDuplicateObjects: false });
}
