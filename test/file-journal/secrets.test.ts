import { afterEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { systemClock } from "../../src/core/clock.ts";
import { FileJournalFiles } from "../../src/file-journal/file-backend.ts";
import { FileLedger, contentHash } from "../../src/file-journal/file-ledger.ts";
import { planRewind } from "../../src/file-journal/rewind.ts";
import { GuardedWriter } from "../../src/workspace-files/guarded-writer.ts";
import { WorkspaceFiles } from "../../src/workspace-files/workspace-files.ts";
import { clearSecrets, registerSecret } from "../../src/security/redact.ts";
import { readFileTool } from "../../src/tools/read-file.ts";
import { writeFileTool } from "../../src/tools/write-file.ts";
import { call, fencedContext } from "../tools/helpers.ts";
import { waitUntil } from "../support/deadline.ts";

// The state holds no secret (docs/security.md): the journal keeps a file that holds
// the API key or a configured credential by hash only, and a rewind says why it cannot
// bring that content back.

const KEY = "sk-journal-test-0123456789abcdef";
afterEach(() => clearSecrets());

function setup() {
  const context = fencedContext();
  const dir = join(context.stateRoot, "session");
  const ledger = new FileLedger({ backend: new FileJournalFiles(dir), clock: systemClock });
  return { context, ledger, dir };
}

function blobs(dir: string): string[] {
  try {
    return readdirSync(join(dir, "files", "blobs")).map((name) => readFileSync(join(dir, "files", "blobs", name), "utf8"));
  } catch {
    return [];
  }
}

describe("the journal and secrets", () => {
  test("a file holding a registered secret is journaled by hash only, before and after; a rewind to before it is refused naming why", async () => {
    registerSecret(KEY);
    const { context, ledger, dir } = setup();
    const since = new Date(Date.now() - 1).toISOString();
    writeFileSync(join(context.workspace, ".env"), `OPENAI_API_KEY=${KEY}\n`);
    await call(readFileTool({ ledger }), { path: ".env" }, context);
    await call(writeFileTool(undefined, { ledger }), { path: ".env", content: `OPENAI_API_KEY=${KEY}\nDEBUG=1\n` }, context);
    await call(writeFileTool(undefined, { ledger }), { path: "plain.txt", content: "nothing to hide\n" }, context);

    // A change's content after is kept in the background (putBlob "soon"): waited for, then no blob holds the key.
    await waitUntil(() => blobs(dir).includes("nothing to hide\n"), "plain.txt's content kept among the journal's blobs");
    expect(blobs(dir).some((text) => text.includes(KEY))).toBe(false);
    const [env] = (await ledger.entries()).filter((entry) => entry.path === ".env");
    expect(env!.before).toEqual({ hash: contentHash(Buffer.from(`OPENAI_API_KEY=${KEY}\n`)), size: 16 + KEY.length, stored: false, secret: true });
    expect(env!.after).toMatchObject({ stored: false, secret: true });

    const steps = await planRewind(ledger, new GuardedWriter(new WorkspaceFiles(), { workspace: context.workspace }, context.fence), since);
    const step = steps.find((s) => s.path === ".env")!;
    expect(step.fatal).toBe(true);
    expect(step.refused).toContain("held a secret");
  });

  test("without registered secrets the same content is stored and restorable", async () => {
    const { context, ledger, dir } = setup();
    writeFileSync(join(context.workspace, ".env"), `OPENAI_API_KEY=${KEY}\n`);
    await call(readFileTool({ ledger }), { path: ".env" }, context);
    await call(writeFileTool(undefined, { ledger }), { path: ".env", content: "DEBUG=1\n" }, context);
    expect(blobs(dir)).toContain(`OPENAI_API_KEY=${KEY}\n`);
  });
});
