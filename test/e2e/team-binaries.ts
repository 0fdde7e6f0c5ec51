import { afterAll, afterEach, beforeAll } from "bun:test";
import { SQL, type Subprocess } from "bun";
import type { ScriptedModelServer } from "../support/model-server.ts";
import { type PostgresCluster, startPostgres } from "../support/postgres.ts";
import { AGENT_BINARY, ensureBinary } from "./agent-binary.ts";

export interface StartedBinary {
  child: Subprocess<"ignore", "pipe", "pipe">;
  stderr: Promise<string>;
}

/**
 * Call at the top of a team e2e file: builds the binary once; after each test,
 * SIGKILLs what `start` started (and what `track` was given), closes the
 * servers given to `serve` and the pools `pool` opened; a PostgreSQL cluster,
 * started on the first `postgresUrl()`, is stopped after the file.
 */
export function teamBinaries() {
  const children: Pick<Subprocess, "kill" | "exited">[] = [];
  const servers: ScriptedModelServer[] = [];
  const pools: SQL[] = [];
  let cluster: Promise<PostgresCluster> | undefined;
  beforeAll(() => {
    ensureBinary();
  }, 120_000);
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.kill("SIGKILL");
      await child.exited;
    }
    for (const server of servers.splice(0)) await server.close();
    for (const pool of pools.splice(0)) await pool.close().catch(() => {});
  });
  afterAll(async () => {
    await (await cluster)?.stop();
  });
  /** The URL of a fresh database on the file's cluster. */
  const postgresUrl = async (): Promise<string> => {
    cluster ??= startPostgres();
    return (await cluster).database();
  };
  return {
    /** Starts the binary in the background, with a model key and no colour. */
    start(args: string[]): StartedBinary {
      const child = Bun.spawn([AGENT_BINARY, ...args], {
        env: { ...process.env, NO_COLOR: "1", OPENAI_API_KEY: "test-key" },
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      children.push(child);
      return { child, stderr: new Response(child.stderr).text() };
    },
    /** Another child process, SIGKILLed after the test like the binary's. */
    track<T extends Pick<Subprocess, "kill" | "exited">>(child: T): T {
      children.push(child);
      return child;
    },
    serve(server: ScriptedModelServer): ScriptedModelServer {
      servers.push(server);
      return server;
    },
    postgresUrl,
    /** `--store URL` of a fresh database. */
    async postgresArgs(): Promise<string[]> {
      return ["--store", await postgresUrl()];
    },
    /** A pool on `url`, closed after the test. */
    pool(url: string, max = 2): SQL {
      const sql = new SQL(url, { max });
      pools.push(sql);
      return sql;
    },
  };
}
