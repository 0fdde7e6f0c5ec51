import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { type PostgresCluster, startPostgres } from "../support/postgres.ts";
import { requirePrerequisite } from "../support/prerequisites.ts";
import { attackSuite, sandboxProblem } from "./attack-fixture.ts";

// The third review's forgery: with `sandbox.network: true` and a `~/.pgpass`, a
// sandboxed `psql` logged in as the user and wrote to the PostgreSQL store (a
// message "from user" the Lead took as the operator's). The credentials file is
// hidden from the sandbox, so the same command cannot log in; outside the
// sandbox the same file still works (the control), so the refusal is the sandbox's.

const setup = attackSuite();
const made: string[] = [];
let cluster: PostgresCluster | undefined;
afterAll(async () => {
  await cluster?.stop();
  for (const path of made) rmSync(path, { recursive: true, force: true });
});

const PASSWORD = "forger-pw-2718";

/** A role that must give a password over TCP, a table it may write, and a home whose ~/.pgpass holds the password. */
async function passwordedRole(pg: PostgresCluster): Promise<{ home: string; conninfo: string }> {
  const sql = new SQL(pg.url, { max: 1 });
  await sql.unsafe(`CREATE ROLE forger LOGIN PASSWORD '${PASSWORD}'`);
  await sql.unsafe("CREATE TABLE forged (line text); GRANT INSERT, SELECT ON forged TO forger");
  // Ahead of the cluster's trust lines: this role over TCP needs its password.
  const hba = join(pg.dir, "data", "pg_hba.conf");
  const rules = await Bun.file(hba).text();
  writeFileSync(hba, `host all forger 127.0.0.1/32 scram-sha-256\n${rules}`);
  await sql.unsafe("SELECT pg_reload_conf()");
  await sql.close();
  // Outside /tmp: the sandbox's /tmp is private, and a home there would be unreadable whatever is hidden.
  const home = mkdtempSync("/var/tmp/agent-forgery-home-");
  made.push(home);
  writeFileSync(join(home, ".pgpass"), `127.0.0.1:${pg.port}:postgres:forger:${PASSWORD}\n`, { mode: 0o600 });
  return { home, conninfo: `host=127.0.0.1 port=${pg.port} dbname=postgres user=forger` };
}

describe("a sandboxed command cannot log in to the store with the user's credentials", () => {
  const sandboxTest = requirePrerequisite("bubblewrap", sandboxProblem()) ? test : test.skip;

  sandboxTest("with the network on, psql with ~/.pgpass is refused inside the sandbox; the same file logs in outside it", async () => {
    cluster = await startPostgres();
    const { home, conninfo } = await passwordedRole(cluster);
    const insert = (who: string) => `psql -w "${conninfo}" -c "INSERT INTO forged VALUES ('${who}')" 2>&1; echo "psql exit $?"`;

    // The control: the user's own psql logs in with the file.
    const outside = Bun.spawnSync(["sh", "-c", insert("from the user")], { env: { ...process.env, HOME: home } });
    expect(outside.stdout.toString()).toContain("psql exit 0");

    const { attack } = setup();
    mkdirSync(join(home, ".config", "agent"), { recursive: true });
    writeFileSync(join(home, ".config", "agent", "config.json"), JSON.stringify({ sandbox: { network: true } }));
    const run = await attack(
      [{ name: "shell", arguments: { command: insert("from the sandbox") } }, { name: "shell", arguments: { command: `cat ${home}/.pgpass; echo end` } }],
      ["--permission-mode", "bypassPermissions"],
      { HOME: home, XDG_CONFIG_HOME: undefined },
    );
    expect(run.code).toBe(0);
    const [psql, pgpass] = run.results;
    // The network is on (the server answered), but no password could be found.
    expect(psql).toContain("password");
    expect(psql).not.toContain("psql exit 0");
    expect(pgpass).not.toContain(PASSWORD);

    const sql = new SQL(cluster.url, { max: 1 });
    const lines = (await sql.unsafe("SELECT line FROM forged ORDER BY line")) as { line: string }[];
    await sql.close();
    expect(lines.map((row) => row.line)).toEqual(["from the user"]);
  }, 60_000);
});
