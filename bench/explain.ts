// EXPLAIN (ANALYZE, BUFFERS) of the queries behind each search, with the default planner settings
// (on MariaDB its ANALYZE); a sequential scan over the versions table fails the benchmark.
import type { Scenario } from './scenarios.js';
import type { MysqlSql, Sql } from './seed.js';

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

/**
 * MariaDB's ANALYZE (the plan with the rows each step really read) or MySQL's EXPLAIN ANALYZE of the
 * same queries; a full scan of versions (access type ALL, "Table scan on versions") fails the run.
 */
export async function explainMysqlScenarios(sql: MysqlSql, scenarios: Scenario[], mariadb: boolean): Promise<Plan[]> {
  const plans: Plan[] = [];
  for (const scenario of scenarios) {
    for (const statement of scenario.statements) {
      const [rows] = (await sql.query(`${mariadb ? 'analyze' : 'explain analyze'} ${statement.sql}`, [...statement.bindings])) as [
        Record<string, unknown>[],
        unknown,
      ];
      let text: string;
      let seqScan: boolean;
      if (mariadb) {
        const columns = ['table', 'type', 'key', 'ref', 'rows', 'r_rows', 'filtered', 'r_filtered', 'Extra'];
        text = [columns.join(' | '), ...rows.map((r) => columns.map((c) => String(r[c] ?? '')).join(' | '))].join('\n');
        seqScan = rows.some((r) => r.table === 'versions' && r.type === 'ALL');
      } else {
        text = rows.map((r) => String(Object.values(r)[0])).join('\n');
        seqScan = /Table scan on versions\b/.test(text);
      }
      plans.push({ scenario: scenario.name, label: statement.label, text, seqScan });
    }
  }
  return plans;
}
