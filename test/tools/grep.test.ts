import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ProtectedPathError } from "../../src/security/protected-paths.ts";
import { grepTool } from "../../src/tools/grep.ts";
import { WorkspaceEscapeError } from "../../src/security/workspace-path.ts";
import { tempDir } from "../support/temp-dir.ts";
import { call, failure, fencedContext, workspaceContext } from "./helpers.ts";

function write(workspace: string, files: Record<string, string | Uint8Array>) {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(workspace, path)), { recursive: true });
    writeFileSync(join(workspace, path), content);
  }
}

const grep = (input: Record<string, unknown>, context: ReturnType<typeof workspaceContext>) =>
  call(grepTool(), input, context).then((result) => result.content);

describe("grep", () => {
  test("finds matching lines as path:line:text, in every output mode", async () => {
    const context = workspaceContext();
    write(context.workspace, {
      "src/store.ts": "import x from 'y';\nexport class FileMailboxStore {\n  claim() {}\n}\n",
      "src/other.ts": "// FileMailboxStore is used here\nnew FileMailboxStore();\n",
      "README.md": "nothing to see\n",
    });
    expect(await grep({ pattern: "class FileMailboxStore" }, context)).toBe("src/store.ts:2:export class FileMailboxStore {");
    expect(await grep({ pattern: "FileMailbox\\w+", output_mode: "files_with_matches" }, context)).toBe("src/other.ts\nsrc/store.ts");
    expect(await grep({ pattern: "FileMailboxStore", output_mode: "count" }, context)).toBe("src/other.ts:2\nsrc/store.ts:1");
    expect(await grep({ pattern: "^new", path: "src/other.ts" }, context)).toBe("src/other.ts:2:new FileMailboxStore();");
    expect(await grep({ pattern: "NOTHING" }, context)).toBe('no matches for "NOTHING" in .');
  });

  test("case_insensitive, glob and context", async () => {
    const context = workspaceContext();
    const lines = Array.from({ length: 12 }, (_, i) => (i === 3 || i === 9 ? `Target ${i + 1}` : `line ${i + 1}`));
    write(context.workspace, { "a/notes.txt": `${lines.join("\n")}\n`, "a/code.ts": "const target = 1;\n", "b/code.ts": "TARGET\n" });
    expect(await grep({ pattern: "target", case_insensitive: true, glob: "*.ts" }, context)).toBe("a/code.ts:1:const target = 1;\nb/code.ts:1:TARGET");
    expect(await grep({ pattern: "target", glob: "b/**/*.ts", case_insensitive: true }, context)).toBe("b/code.ts:1:TARGET");
    expect(await grep({ pattern: "^Target", path: "a", context: 1 }, context)).toBe(
      [
        "a/notes.txt-3-line 3",
        "a/notes.txt:4:Target 4",
        "a/notes.txt-5-line 5",
        "--",
        "a/notes.txt-9-line 9",
        "a/notes.txt:10:Target 10",
        "a/notes.txt-11-line 11",
      ].join("\n"),
    );
    // Groups that touch are one group; the separator only stands between groups.
    expect(await grep({ pattern: "^Target", path: "a", context: 3 }, context)).not.toContain("--");
  });

  test("skips binary files, .git/, and what .gitignore and .ignore files exclude, nested ones too", async () => {
    const context = workspaceContext();
    write(context.workspace, {
      ".gitignore": "node_modules/\n*.log\n!keep.log\n",
      "node_modules/pkg/index.js": "needle\n",
      "debug.log": "needle\n",
      "keep.log": "needle\n",
      ".git/config": "needle\n",
      "image.bin": new Uint8Array([0x89, 0x50, 0, 0x0a, ...Buffer.from("needle")]),
      "pkg/.gitignore": "generated/\n",
      "pkg/generated/out.ts": "needle\n",
      "pkg/src/main.ts": "needle\n",
      "pkg/.ignore": "src/skip.ts\n",
      "pkg/src/skip.ts": "needle\n",
      "docs/.gitignore": "*.md\n!*.md\n",
      "docs/guide.md": "needle\n",
      ".github/workflow.yml": "needle\n",
    });
    expect(await grep({ pattern: "needle", output_mode: "files_with_matches" }, context)).toBe(
      [".github/workflow.yml", "docs/guide.md", "keep.log", "pkg/src/main.ts"].join("\n"),
    );
    // A path named explicitly is searched even when the rules exclude it, as rg does.
    expect(await grep({ pattern: "needle", path: "node_modules" }, context)).toBe("node_modules/pkg/index.js:1:needle");
  });

  test("caps the output with a note saying how to narrow, and cuts very long lines", async () => {
    const context = workspaceContext();
    write(context.workspace, {
      "many.txt": Array.from({ length: 30 }, (_, i) => `hit ${i + 1}`).join("\n"),
      "more.txt": "hit again\n",
      "long.txt": `hit ${"x".repeat(1000)}\n`,
    });
    const capped = await grep({ pattern: "^hit", path: "many.txt", head_limit: 5 }, context);
    expect(capped.split("\n")).toEqual([
      ...Array.from({ length: 5 }, (_, i) => `many.txt:${i + 1}:hit ${i + 1}`),
      "[stopped after 5 lines; there are more matches: narrow the search with path, glob or a more specific pattern, or raise head_limit (up to 2000)]",
    ]);
    const files = await grep({ pattern: "^hit", output_mode: "files_with_matches", head_limit: 2 }, context);
    expect(files.split("\n")).toEqual(["long.txt", "many.txt", expect.stringContaining("[stopped after 2 files; there are more matches")]);
    const long = await grep({ pattern: "^hit x", path: "long.txt" }, context);
    expect(long).toBe(`long.txt:1:hit ${"x".repeat(396)}… [line cut at 400 characters]`);
    expect((await call(grepTool({ maxChars: 40 }), { pattern: "hit", path: "many.txt" }, context)).content).toContain(
      "more characters truncated; narrow the search",
    );
  });

  test("files over the size limit are listed in a note, not searched; a large binary is just skipped", async () => {
    const context = workspaceContext();
    write(context.workspace, {
      "small.txt": "needle\n",
      "big.log": `${"x".repeat(2000)}\nneedle\n`,
      "big.bin": new Uint8Array([0, ...Buffer.from(`${"x".repeat(2000)}\nneedle\n`)]),
      // Past the read buffer, so its size comes from fstat.
      "huge.txt": `${"y\n".repeat(200_000)}needle\n`,
    });
    const result = await call(grepTool({ maxFileBytes: 1024 }), { pattern: "needle" }, context);
    expect(result.content).toBe("small.txt:1:needle\n[not searched, larger than 1024 bytes: big.log, huge.txt]");
    const roomy = await call(grepTool(), { pattern: "needle", output_mode: "count" }, context);
    expect(roomy.content).toBe("big.log:1\nhuge.txt:1\nsmall.txt:1");
  });

  test("a CRLF file's lines match and show without the carriage return", async () => {
    const context = workspaceContext();
    write(context.workspace, { "win.txt": "first line\r\nsecond\r\n" });
    expect(await grep({ pattern: "line$" }, context)).toBe("win.txt:1:first line");
    expect(await grep({ pattern: "^second$" }, context)).toBe("win.txt:2:second");
  });

  test("an invalid regular expression is refused with a hint", async () => {
    const context = workspaceContext();
    write(context.workspace, { "a.ts": "f(x)\n" });
    const error = await failure(grepTool(), { pattern: "f(x" }, context);
    expect(error.message).toMatch(/^pattern "f\(x" is not a valid JavaScript regular expression \(.*\); escape special characters/);
    expect(await grep({ pattern: "f\\(x\\)" }, context)).toBe("a.ts:1:f(x)");
  });

  test("refuses the state root and paths leaving the workspace; never searches the state root", async () => {
    const guarded = fencedContext();
    const { stateRoot, ...context } = guarded;
    write(context.workspace, { ".agent/agents/lead.jsonl": "secret prompt\n", "notes.txt": "secret plan\n" });
    expect(await grep({ pattern: "secret" }, guarded)).toBe("notes.txt:1:secret plan");
    expect(await failure(grepTool(), { pattern: "secret", path: ".agent" }, guarded)).toBeInstanceOf(ProtectedPathError);
    const refused = await failure(grepTool(), { pattern: "secret", path: ".agent/agents/lead.jsonl" }, guarded);
    expect(refused.message).toStartWith(`path ".agent/agents/lead.jsonl" is in the agent's state directory, which no tool may read`);
    // Also when reached by a path that only resolves there.
    expect(await failure(grepTool(), { pattern: "secret", path: "notes.txt/../.agent" }, guarded)).toBeInstanceOf(ProtectedPathError);
    // Through a symlink too: the path is resolved before the check.
    symlinkSync(join(stateRoot, "agents"), join(context.workspace, "innocent"));
    expect(await failure(grepTool(), { pattern: "secret", path: "innocent" }, guarded)).toBeInstanceOf(ProtectedPathError);
    const outside = tempDir("agent-outside-");
    write(outside, { "x.txt": "secret\n" });
    expect(await failure(grepTool(), { pattern: "secret", path: outside }, context)).toBeInstanceOf(WorkspaceEscapeError);
  });

  test("does not follow symbolic links while walking", async () => {
    const context = workspaceContext();
    const outside = tempDir("agent-outside-");
    write(outside, { "x.txt": "secret\n" });
    symlinkSync(outside, join(context.workspace, "linkdir"));
    symlinkSync(join(outside, "x.txt"), join(context.workspace, "link.txt"));
    expect(await grep({ pattern: "secret" }, context)).toBe('no matches for "secret" in .');
  });

  test("stops when the call is interrupted", async () => {
    const controller = new AbortController();
    const context = workspaceContext({ signal: controller.signal });
    write(context.workspace, { "a/x.txt": "x\n", "b/x.txt": "x\n" });
    controller.abort();
    expect((await failure(grepTool(), { pattern: "x$" }, context)).message).toBe("interrupted");
  });
});
