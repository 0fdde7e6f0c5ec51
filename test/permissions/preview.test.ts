import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ANSI_PALETTE, SHOWN_DIFF_LINES, paletteFor, previewCall } from "../../src/permissions/preview.ts";

const workspace = mkdtempSync(join(tmpdir(), "preview-"));

describe("previewCall: what a call will do", () => {
  test("write_file: a unified diff against the file as it is now", () => {
    writeFileSync(join(workspace, "a.txt"), "one\ntwo\nthree\n");
    const lines = previewCall({
      tool: "write_file",
      effect: "edit",
      subject: "a.txt",
      identity: "lead",
      workspace,
      input: { path: "a.txt", content: "one\n2\nthree\n" },
    });
    expect(lines).toEqual(["write a.txt", "@@ -1,3 +1,3 @@", " one", "-two", "+2", " three"]);
  });

  test("a new file, coloured, clipped with the count of hidden lines", () => {
    const content = Array.from({ length: 100 }, (_, i) => `line ${i}`).join("\n");
    const lines = previewCall(
      { tool: "write_file", effect: "edit", subject: "new.txt", identity: "lead", workspace, input: { path: "new.txt", content } },
      ANSI_PALETTE,
    );
    expect(lines[0]).toContain("(a new file)");
    expect(lines[2]).toBe("\x1b[32m+line 0\x1b[0m");
    expect(lines).toHaveLength(1 + SHOWN_DIFF_LINES + 1);
    expect(lines.at(-1)).toContain(`… ${101 - SHOWN_DIFF_LINES} more diff lines not shown`);
  });

  test("edit_file: the edit applied to the current file", () => {
    writeFileSync(join(workspace, "b.txt"), "alpha\nbeta\n");
    const input = { path: "b.txt", old_string: "beta", new_string: "gamma" };
    const lines = previewCall({ tool: "edit_file", effect: "edit", subject: "b.txt", identity: "lead", workspace, input });
    expect(lines).toEqual(["edit b.txt", "@@ -1,2 +1,2 @@", " alpha", "-beta", "+gamma"]);
  });

  test("shell: the command and the directory; MCP: server, tool and arguments", () => {
    expect(previewCall({ tool: "shell", effect: "execute", subject: "ls -l", identity: "lead", workspace, input: { command: "ls -l" } })).toEqual([
      "command: ls -l",
      `in: ${workspace}`,
    ]);
    const mcp = previewCall({ tool: "mcp__github__create_issue", effect: "execute", subject: "", identity: "lead", input: { title: "x" } });
    expect(mcp).toEqual(["server: github", "tool: create_issue", 'arguments: {\n  "title": "x"\n}']);
  });

  test("colour only on a terminal without NO_COLOR", () => {
    expect(paletteFor({ isTTY: true }, {}).added).toBe("\x1b[32m");
    expect(paletteFor({ isTTY: true }, { NO_COLOR: "1" }).added).toBe("");
    expect(paletteFor({ isTTY: false }, {}).added).toBe("");
  });
});
