// Writes the server's OpenAPI description to public/api/openapi.yaml (npm run openapi), so that it
// can be read in the repository and downloaded from the page; test/ship/openapi.test.ts fails when it is stale.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openApiYaml } from '../server/openapi.js';
import { API_ENDPOINTS } from '../server/routes/index.js';

const file = fileURLToPath(new URL('../public/api/openapi.yaml', import.meta.url));
mkdirSync(fileURLToPath(new URL('../public/api/', import.meta.url)), { recursive: true });
writeFileSync(file, openApiYaml(API_ENDPOINTS));
console.log(`wrote ${file}`);
