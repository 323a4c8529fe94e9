/**
 * Vitest global setup: one throwaway PostgreSQL cluster for the whole run (postgres-cluster.ts),
 * provided to the test files as `postgresUrl`; each file makes its own database in it
 * (postgres-support.ts freshDatabase), so files running side by side never share a journal.
 *
 * AGENTPLANE_TEST_DATABASE_URL points the tests at a server someone already runs instead.
 * Without PostgreSQL's binaries the PostgreSQL tests skip, saying so, except under CI, where
 * .ci/run installs them and their absence is a failure.
 */
import type { TestProject } from 'vitest/node';
import { postgresBinaries, startPostgresCluster, type PostgresCluster } from './postgres-cluster';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A superuser URL of the test cluster, or null when there is none (postgresMissing says why). */
    postgresUrl: string | null;
    postgresMissing: string | null;
  }
}

let cluster: PostgresCluster | null = null;

export async function setup(project: TestProject): Promise<void> {
  const given = process.env.AGENTPLANE_TEST_DATABASE_URL;
  if (given) {
    project.provide('postgresUrl', given);
    project.provide('postgresMissing', null);
    return;
  }
  if (!postgresBinaries()) {
    const reason = "PostgreSQL's binaries are not installed (Debian: apt-get install postgresql; .ci/run installs them)";
    if (process.env.AGENTPLANE_REQUIRE_POSTGRES || process.env.CI) throw new Error(reason);
    project.provide('postgresUrl', null);
    project.provide('postgresMissing', reason);
    return;
  }
  cluster = await startPostgresCluster();
  project.provide('postgresUrl', cluster.url);
  project.provide('postgresMissing', null);
}

export function teardown(): void {
  cluster?.stop();
  cluster = null;
}
