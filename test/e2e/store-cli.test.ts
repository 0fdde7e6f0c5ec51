// `--store` and `agent store migrate` on the compiled binary against a real
// throw-away PostgreSQL cluster: selection, migrations, one-line errors, and a
// password that never shows.
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, runAgent } from "./agent-binary.ts";
import { expectOneLineError, runSetup } from "./run-fixture.ts";
import { clusterForFile } from "../support/postgres.ts";

const pg = clusterForFile(ensureBinary);

/** The cluster trusts local logins, so any password is accepted: a real URL with a secret in it. */
const withPassword = (url: string, password: string) => url.replace("postgres://agent@", `postgres://agent:${password}@`);

describe("agent store migrate", () => {
  test("applies the schema once, then has nothing to apply; the password is masked", async () => {
    const { workspace } = runSetup();
    const url = withPassword(await pg().database(), "s3cret-pw");
    const first = await runAgent(["store", "migrate", "--store", url, "--workspace", workspace]);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^postgres:\/\/agent:\[REDACTED\]@127\.0\.0\.1:\d+\/\w+: schema at version \d+; applied 1 \(mailbox\)/);
    const again = await runAgent(["store", "migrate", "--json", "--workspace", workspace], { env: { AGENT_STORE: url } });
    expect(again.code).toBe(0);
    const json = JSON.parse(again.stdout);
    expect(json.applied).toEqual([]);
    expect(json.migrations.map((m: { version: number }) => m.version)).toContain(1);
    expect(json.store).toContain("[REDACTED]");
    expect(first.stdout + again.stdout).not.toContain("s3cret-pw");
  });

  test("an unreachable server is exit 5 with one line; the password never shows", async () => {
    const { workspace } = runSetup();
    const url = `postgres://agent:pw-9f8e7d@127.0.0.1:${pg().port + 1}/agent`;
    const result = await runAgent(["store", "migrate", "--store", url, "--workspace", workspace]);
    expectOneLineError(result, 5, /cannot use the PostgreSQL store postgres:\/\/agent:\[REDACTED\]@127\.0\.0\.1:\d+\/agent: .*is the server running/);
    expect(result.stdout + result.stderr).not.toContain("pw-9f8e7d");
  });

  test("a files store or a bad URL is a usage error (exit 2)", async () => {
    const { workspace } = runSetup();
    expectOneLineError(await runAgent(["store", "migrate", "--workspace", workspace], { env: { AGENT_STORE: undefined } }), 2, /needs a PostgreSQL store/);
    expectOneLineError(
      await runAgent(["store", "migrate", "--store", "mysql://root:topsecret1@db/x", "--workspace", workspace]),
      2,
      /invalid value "mysql:\/\/root:\[REDACTED\]@db\/x" for --store: expected `files` or postgres:.*\("mysql" is not a supported store\)/,
    );
  });

  test("config: a password in the project's file is refused; config show masks the store's", async () => {
    const { workspace } = runSetup();
    mkdirSync(join(workspace, ".agent"));
    writeFileSync(join(workspace, ".agent", "config.json"), JSON.stringify({ store: "postgres://agent:leaked-pw@db/x" }));
    expectOneLineError(await runAgent(["config", "show", "--workspace", workspace]), 2, /holds a password in store.*AGENT_STORE/);
    writeFileSync(join(workspace, ".agent", "config.json"), "{}");
    writeFileSync(join(workspace, ".agent", "config.local.json"), JSON.stringify({ store: "postgres://agent:local-pw1@db/x" }), { mode: 0o600 });
    // The user's own local file, trusted: its store applies (untrusted, it is ignored).
    const shown = await runAgent(["config", "show", "--json", "--workspace", workspace, "--trust-project"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).not.toContain("local-pw1");
    expect(shown.stdout).toContain("postgres://agent:[REDACTED]@db/x");
  });
});
