import { afterEach, expect, test } from "bun:test";
import { loadSettings } from "../../src/config/load.ts";
import { clearSecrets, redact } from "../../src/security/redact.ts";
import { displayStoreUrl, parseStoreUrl, storeSocketDir } from "../../src/store/store-url.ts";
import { tempDir } from "../support/temp-dir.ts";

afterEach(() => clearSecrets());

test("files is the default; --store beats AGENT_STORE", () => {
  const workspace = tempDir();
  expect(loadSettings({ workspace, env: {} }).settings.store).toEqual({ kind: "files" });
  const fromEnv = loadSettings({ workspace, env: { AGENT_STORE: "postgres://a@h/db" } });
  expect(fromEnv.settings.store).toEqual({ kind: "postgres", url: "postgres://a@h/db" });
  expect(fromEnv.sources.store).toEqual({ level: "env", from: "AGENT_STORE" });
  const fromFlag = loadSettings({ workspace, env: { AGENT_STORE: "postgres://a@h/db" }, flags: { store: "files" } });
  expect(fromFlag.settings.store).toEqual({ kind: "files" });
});

test("a bad value names its source and never echoes a password", () => {
  const workspace = tempDir();
  expect(() => loadSettings({ workspace, env: { AGENT_STORE: "redis://u:pw-secret@h" } })).toThrow(
    /invalid AGENT_STORE="redis:\/\/u:\[REDACTED\]@h" in the environment: expected `files` or postgres/,
  );
  expect(() => loadSettings({ workspace, env: {}, flags: { store: "not a url" } })).toThrow(/for --store: expected `files` or a URL/);
});

test("a parsed URL's password is masked in all output from then on; display masks it too", () => {
  const parsed = parseStoreUrl("postgres://agent:longer-password-1@db/agent");
  expect(parsed).toEqual({ kind: "postgres", url: "postgres://agent:longer-password-1@db/agent" });
  expect(redact("the password is longer-password-1")).toBe("the password is [REDACTED]");
  expect(displayStoreUrl("postgres://agent:longer-password-1@db:5432/agent?sslmode=require")).toBe(
    "postgres://agent:[REDACTED]@db:5432/agent?sslmode=require",
  );
  expect(displayStoreUrl("postgres://agent@db/agent")).toBe("postgres://agent@db/agent");
  expect(displayStoreUrl({ kind: "files" })).toBe("files");
});

test("storeSocketDir: the directory of the unix socket a store URL names, for the sandbox to hide", () => {
  const dir = (url: string) => storeSocketDir({ kind: "postgres", url });
  expect(dir("postgres://agent@localhost/db?host=/var/run/postgresql")).toBe("/var/run/postgresql");
  expect(dir("postgres:///db?host=/run/pg")).toBe("/run/pg");
  expect(dir("postgres://agent@%2Fvar%2Frun%2Fpostgresql/db")).toBe("/var/run/postgresql");
  expect(dir("postgres://agent@localhost/db?path=/srv/pg/.s.PGSQL.5432")).toBe("/srv/pg");
  expect(dir("postgres://agent@127.0.0.1:5432/db")).toBeUndefined();
  expect(dir("postgres://agent@db.example.com/db?host=db2.example.com")).toBeUndefined();
  expect(storeSocketDir({ kind: "files" })).toBeUndefined();
});
