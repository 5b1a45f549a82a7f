// EXPLAIN (ANALYZE, BUFFERS) of the queries behind each search, with the default planner settings;
// a sequential scan over the versions table fails the benchmark.
import type { Scenario } from './scenarios.js';
import type { Sql } from './seed.js';

export interface Plan {
  scenario: string;
  label: string;
  text: string;
  seqScan: boolean;
}

const SEQ_SCAN = /Seq Scan on versions\b/;

export async function explainScenarios(sql: Sql, scenarios: Scenario[]): Promise<Plan[]> {
  const plans: Plan[] = [];
  for (const scenario of scenarios) {
    for (const statement of scenario.statements) {
      const result = await sql.query<{ 'QUERY PLAN': string }>(
        `explain (analyze, buffers) ${statement.sql}`,
        [...statement.bindings],
      );
      const text = result.rows.map((r) => r['QUERY PLAN']).join('\n');
      plans.push({ scenario: scenario.name, label: statement.label, text, seqScan: SEQ_SCAN.test(text) });
    }
  }
  return plans;
}
