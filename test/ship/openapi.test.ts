// public/api/openapi.yaml is what the server serves (npm run openapi rewrites it) and valid OpenAPI 3.
import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { OPENAPI_FILE } from './api-files.js';

const inRepository = readFileSync(OPENAPI_FILE, 'utf8');

describe('the OpenAPI file in the repository', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('equals /swagger.yaml and /v1/openapi.json of a running server (else run npm run openapi)', async () => {
    const yaml = await server.request('GET', '/swagger.yaml');
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(yaml.text, 'public/api/openapi.yaml is stale: run npm run openapi').toBe(inRepository);
    const json = await server.request('GET', '/v1/openapi.json');
    expect(json.body).toEqual(parse(inRepository));
  });

  it('validates as OpenAPI 3 with every reference resolved', async () => {
    const api = (await SwaggerParser.validate(structuredClone(parse(inRepository)))) as { openapi: string; paths: Record<string, unknown> };
    expect(api.openapi).toMatch(/^3\./);
    expect(Object.keys(api.paths)).toEqual(expect.arrayContaining(['/v1/authentication/generate-token', '/v1/repositories/search', '/metrics']));
  });

  it('is checked by a validator that rejects a broken description', async () => {
    const broken = parse(inRepository) as { paths: Record<string, Record<string, { responses?: unknown }>> };
    broken.paths['/v1/repositories']!.post!.responses = { 201: { description: 'x', content: { 'application/json': { schema: { $ref: '#/components/schemas/Nope' } } } } };
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow(/Nope/);
    await expect(SwaggerParser.validate({ openapi: '3.1.0', paths: {} } as never)).rejects.toThrow();
  });
});
