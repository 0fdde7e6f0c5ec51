import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { PostgresConnection } from "../../src/postgres/connection.ts";
import { PgTeammateLeases } from "../../src/postgres/teammate-leases.ts";
import { clusterForFile } from "../support/postgres.ts";
import { leaseContract, remoteHolder } from "./lease-contract.ts";

// The lease contract on a real throw-away PostgreSQL cluster, and takers on
// separate connections racing for one lease.

const cluster = clusterForFile();
const pools: SQL[] = [];
afterAll(async () => {
  for (const pool of pools) await pool.close().catch(() => {});
});

async function database(): Promise<SQL> {
  const url = await cluster().database();
  await (await PostgresConnection.open(url, { max: 1 })).close();
  const sql = new SQL(url, { max: 8 });
  pools.push(sql);
  return sql;
}

describe("PgTeammateLeases", () => {
  leaseContract(async (clock) => {
    const sql = await database();
    // A row's xmin is the transaction that last wrote it: the distinct new ones are the commits since.
    const versions = async () => new Map((await sql`SELECT name, xmin::text AS x FROM agent_teammate_leases WHERE session = 's1'`).map((row: { name: string; x: string }) => [row.name, row.x]));
    return {
      leases: new PgTeammateLeases({ sql, session: "s1", clock }),
      countWrites: async () => {
        const before = await versions();
        return async () => new Set([...(await versions())].filter(([name, x]) => before.get(name) !== x).map(([, x]) => x)).size;
      },
    };
  });

  test("of eight takers on their own connections, exactly one gets a free lease; another session's lease is its own", async () => {
    const sql = await database();
    const takers = Array.from({ length: 8 }, (_, i) => new PgTeammateLeases({ sql, session: "s1" }).acquire("alice", remoteHolder(`t${i}`), 60_000));
    const won = (await Promise.all(takers)).filter((lease) => lease !== null);
    expect(won).toHaveLength(1);
    expect(await new PgTeammateLeases({ sql, session: "s2" }).acquire("alice", remoteHolder("other"), 60_000)).not.toBeNull();
    expect((await new PgTeammateLeases({ sql, session: "s1" }).live()).map((lease) => lease.holder.id)).toEqual([won[0]!.holder.id]);
  });
});
