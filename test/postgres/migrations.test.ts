// Schema migrations on a real throw-away cluster: applied on first use, idempotent,
// exactly once when several processes migrate one database at once.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { StoreConnectionError } from "../../src/core/errors.ts";
import { PostgresConnection } from "../../src/postgres/connection.ts";
import { SCHEMA_VERSION, appliedMigrations } from "../../src/postgres/migrations.ts";
import { MIGRATIONS } from "../../src/postgres/migrations/index.ts";
import { type PostgresCluster, startPostgres } from "../support/postgres.ts";

let cluster: PostgresCluster;
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(async () => {
  await cluster?.stop();
});

describe("migrations", () => {
  test("the list is numbered 1..n without gaps", () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(SCHEMA_VERSION).toBe(MIGRATIONS.length);
  });

  test("the first open applies every version, the next one applies nothing", async () => {
    const url = await cluster.database();
    const first = await PostgresConnection.open(url);
    expect(first.applied).toEqual(MIGRATIONS.map((m) => m.version));
    const tables: { name: string }[] = await first.sql`SELECT tablename AS name FROM pg_tables WHERE tablename LIKE 'agent_%' ORDER BY 1`;
    expect(tables.map((t) => t.name)).toContain("agent_messages");
    await first.close();
    const second = await PostgresConnection.open(url);
    expect(second.applied).toEqual([]);
    expect((await appliedMigrations(second.sql)).map((m) => m.version)).toEqual(MIGRATIONS.map((m) => m.version));
    await second.close();
  });

  test("six processes migrating one fresh database at once apply each version exactly once", async () => {
    const url = await cluster.database();
    const script = `
      const { PostgresConnection } = await import(${JSON.stringify(`${import.meta.dir}/../../src/postgres/connection.ts`)});
      const c = await PostgresConnection.open(process.argv[1]);
      console.log(JSON.stringify(c.applied));
      await c.close();`;
    const children = Array.from({ length: 6 }, () =>
      Bun.spawn([process.execPath, "-e", script, url], { stdout: "pipe", stderr: "pipe" }),
    );
    const outputs = await Promise.all(
      children.map(async (child) => {
        const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
        expect({ code, err }).toEqual({ code: 0, err: "" });
        return JSON.parse(out) as number[];
      }),
    );
    const applied = outputs.flat().sort((a, b) => a - b);
    expect(applied).toEqual(MIGRATIONS.map((m) => m.version));
    const sql = new SQL(url, { max: 1 });
    const [row]: { n: number }[] = await sql`SELECT count(*)::int AS n FROM agent_schema_migrations`;
    expect(row!.n).toBe(MIGRATIONS.length);
    await sql.close();
  });

  test("a database migrated by a newer build is refused, and left alone", async () => {
    const url = await cluster.database();
    await (await PostgresConnection.open(url)).close();
    const sql = new SQL(url, { max: 1 });
    await sql`INSERT INTO agent_schema_migrations (version, name) VALUES (${SCHEMA_VERSION + 1}, 'from the future')`;
    await sql.close();
    await expect(PostgresConnection.open(url)).rejects.toThrow(/newer than this agent knows/);
  });
});

describe("connection failures", () => {
  test("nobody listening: one StoreConnectionError line, password masked", async () => {
    const url = `postgres://agent:hunter2@127.0.0.1:${cluster.port + 1}/postgres`;
    const error = await PostgresConnection.open(url).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreConnectionError);
    const message = (error as Error).message;
    expect(message).not.toContain("hunter2");
    expect(message).toContain("postgres://agent:[REDACTED]@127.0.0.1");
    expect(message).toContain("is the server running");
    expect(message).not.toContain("\n");
  });

  test("no such database: says to create it", async () => {
    const error = await PostgresConnection.open(`postgres://agent@127.0.0.1:${cluster.port}/nope`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreConnectionError);
    expect((error as Error).message).toContain("create the database");
  });
});
