import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { systemClock } from "../../src/core/clock.ts";
import { FileJournalFiles } from "../../src/file-journal/file-backend.ts";
import { FileLedger, contentHash } from "../../src/file-journal/file-ledger.ts";
import { changesText, listChanges } from "../../src/cli/files/changes.ts";
import { FileHistoryBackend } from "../../src/runtime/file-history.ts";
import { readFileTool } from "../../src/tools/read-file.ts";
import { shellTool } from "../../src/tools/shell.ts";
import { writeFileTool } from "../../src/tools/write-file.ts";
import { call, failure, fencedContext } from "../tools/helpers.ts";

// A shell command's effects on the workspace are journaled (docs/files.md#the-change-journal):
// the workspace is scanned before and after the command (real files, a real `sh`), and
// what it created, changed and removed is recorded as changes by that agent's shell.

function setup() {
  const context = fencedContext();
  const ledger = new FileLedger({ backend: new FileJournalFiles(join(context.stateRoot, "session")), clock: systemClock });
  return { context, ledger, bob: { ...context, identity: "bob" } };
}

describe("shell commands' effects", () => {
  test("created, changed and removed files are journaled as the command's; the content before is known only where the agent had read it", async () => {
    const { context, ledger } = setup();
    writeFileSync(join(context.workspace, "read.txt"), "x = 1\n");
    writeFileSync(join(context.workspace, "unread.txt"), "secret draft\n");
    await call(readFileTool({ ledger }), { path: "read.txt" }, context);
    const result = await call(shellTool({ ledger }), { command: "sed -i 's/1/2/' read.txt && echo made > new.txt && rm unread.txt" }, context);
    expect(result.content).toContain("[exit code 0]");
    const entries = await ledger.entries();
    expect(entries.map((e) => [e.path, e.agent, e.kind, e.tool])).toEqual([
      ["new.txt", "lead", "shell", "shell"],
      ["read.txt", "lead", "shell", "shell"],
      ["unread.txt", "lead", "shell", "shell"],
    ]);
    const [created, changed, removed] = entries;
    expect(created!.before).toBeNull();
    expect(created!.after).toEqual({ hash: contentHash(Buffer.from("made\n")), size: 5, stored: true });
    expect(changed!.before).toEqual({ hash: contentHash(Buffer.from("x = 1\n")), size: 6, stored: true });
    expect(changed!.after).toMatchObject({ hash: contentHash(Buffer.from("x = 2\n")), stored: true });
    expect(removed!.before).toEqual({ hash: "", size: 13, stored: false, known: false });
    expect(removed!.after).toBeNull();
    // The agent's state (the fence's state root, under the workspace here) is not scanned.
    expect(entries.some((e) => e.path.startsWith(".agent"))).toBe(false);
    // As agent changes --diff shows them: the unknown content said so, not read.
    const listing = await listChanges(ledger.backend, new FileHistoryBackend(join(context.stateRoot, "session")), { diff: true });
    expect(listing.diffs).toEqual([
      "@@ -1,0 +1,1 @@\n+made",
      "@@ -1,1 +1,1 @@\n-x = 1\n+x = 2",
      "(the content before this shell command is not known: no agent had read it as it was)",
    ]);
    expect(changesText(listing, "s1")).toContain("removed (content not known)");
  });

  test("a teammate's write over a file another agent's command changed is refused naming that command", async () => {
    const { context, ledger, bob } = setup();
    writeFileSync(join(context.workspace, "notes.txt"), "line one\n");
    await call(readFileTool({ ledger }), { path: "notes.txt" }, bob);
    await call(shellTool({ ledger }), { command: "echo 'line two' >> notes.txt" }, context);
    const error = await failure(writeFileTool(undefined, { ledger }), { path: "notes.txt", content: "bob's line\n" }, bob);
    expect(error.message).toBe(
      "write_file refused: notes.txt changed after you read it: a shell command of lead changed line 2; read_file it again and redo your change on the current content\n" +
        "@@ -2,0 +2,1 @@\n+line two",
    );
    expect(readFileSync(join(context.workspace, "notes.txt"), "utf8")).toBe("line one\nline two\n");
  });
});
