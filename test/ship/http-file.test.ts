// public/api/repoadmin.http covers every operation and works from top to bottom against a fresh
// server, read the way the VS Code REST Client reads it (file variables, "# @name" answers).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/server.js';
import { HTTP_FILE, uncovered } from './api-files.js';

interface HttpRequest {
  title: string;
  name?: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

function parseHttpFile(text: string): { variables: Record<string, string>; requests: HttpRequest[] } {
  const [head, ...blocks] = text.split(/^###/m);
  const variables = Object.fromEntries([...head!.matchAll(/^@(\w+)\s*=\s*(.*)$/gm)].map((m) => [m[1]!, m[2]!.trim()]));
  const requests = blocks.map((block) => {
    const lines = block.split('\n');
    const title = lines.shift()!.trim();
    const name = block.match(/^# @name (\w+)$/m)?.[1];
    const rest = lines.filter((l) => !l.startsWith('#'));
    while (rest[0]?.trim() === '') rest.shift();
    const [method, url] = rest.shift()!.trim().split(/\s+/) as [string, string];
    const headers: Record<string, string> = {};
    while (rest.length > 0 && rest[0]!.trim() !== '') {
      const line = rest.shift()!;
      headers[line.slice(0, line.indexOf(':')).trim()] = line.slice(line.indexOf(':') + 1).trim();
    }
    return { title, name, method, url, headers, body: rest.join('\n').trim() };
  });
  return { variables, requests };
}

const { variables, requests } = parseHttpFile(readFileSync(HTTP_FILE, 'utf8'));

describe('the .http file', () => {
  it('has a request for every operation of the OpenAPI description', () => {
    const paths = requests.map((r) => ({ method: r.method, path: r.url.replace('{{baseUrl}}', '').split('?')[0]!.replace(/\{\{\w+\.response\.body\.\$\.[\w.]+\}\}/g, '{{id}}') }));
    expect(uncovered(paths)).toEqual([]);
  });

  it('runs from top to bottom against a fresh server, each answer with its expected status', async () => {
    const server = await startTestServer({ mustChangeAdminPassword: true });
    try {
      const answers: Record<string, unknown> = {};
      const fill = (text: string) =>
        text.replace(/\{\{([\w.$]+)\}\}/g, (whole, ref: string) => {
          if (ref === 'baseUrl') return server.url;
          if (ref in variables) return variables[ref]!;
          const m = /^(\w+)\.response\.body\.\$\.([\w.]+)$/.exec(ref);
          if (!m || !(m[1]! in answers)) throw new Error(`${whole} refers to no earlier named answer`);
          return String(m[2]!.split('.').reduce<unknown>((v, key) => (v as Record<string, unknown>)[key], answers[m[1]!]));
        });
      const outcomes: string[] = [];
      for (const request of requests) {
        const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, fill(v)]));
        const response = await fetch(fill(request.url), { method: request.method, headers, body: request.body ? fill(request.body) : undefined });
        const text = await response.text();
        if (request.name) answers[request.name] = JSON.parse(text);
        const expected = /: (\d{3})$/.exec(request.title)?.[1];
        const ok = expected ? response.status === Number(expected) : response.status >= 200 && response.status < 300;
        if (!ok) outcomes.push(`${request.title}: ${response.status} ${text.slice(0, 200)}`);
      }
      expect(outcomes).toEqual([]);
      expect(requests.length).toBeGreaterThanOrEqual(15);
    } finally {
      await server.close();
    }
  }, 60_000);
});
