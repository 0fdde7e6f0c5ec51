import { afterAll, afterEach, beforeAll } from "bun:test";
import type { Subprocess } from "bun";
import type { ScriptedModelServer } from "../support/model-server.ts";
import { type PostgresCluster, startPostgres } from "../support/postgres.ts";
import { AGENT_BINARY, ensureBinary } from "./agent-binary.ts";

export interface StartedBinary {
  child: Subprocess<"ignore", "pipe", "pipe">;
  stderr: Promise<string>;
}

/**
 * Call at the top of a team e2e file: builds the binary once; after each test,
 * SIGKILLs what `start` started and closes the servers given to `serve`; a
 * PostgreSQL cluster, started on the first `postgresArgs()`, is stopped after the file.
 */
export function teamBinaries() {
  const children: StartedBinary["child"][] = [];
  const servers: ScriptedModelServer[] = [];
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
  });
  afterAll(async () => {
    await (await cluster)?.stop();
  });
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
    serve(server: ScriptedModelServer): ScriptedModelServer {
      servers.push(server);
      return server;
    },
    /** `--store URL` of a fresh database. */
    async postgresArgs(): Promise<string[]> {
      cluster ??= startPostgres();
      return ["--store", await (await cluster).database()];
    },
  };
}
