import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { globTool } from "../../src/tools/glob.ts";
import { WorkspaceEscapeError } from "../../src/tools/workspace-path.ts";
import { tempDir } from "../support/temp-dir.ts";
import { call, failure, workspaceContext } from "./helpers.ts";

function files(workspace: string, paths: string[]) {
  for (const path of paths) {
    mkdirSync(dirname(join(workspace, path)), { recursive: true });
    writeFileSync(join(workspace, path), "");
  }
}

describe("glob", () => {
  test("lists matching files relative to the workspace, sorted, hidden ones left out", async () => {
    const context = workspaceContext();
    files(context.workspace, ["src/b.ts", "src/a.ts", "src/x/c.ts", "README.md", ".hidden/d.ts", "src/e.js"]);
    expect((await call(globTool(), { pattern: "**/*.ts" }, context)).content).toBe("src/a.ts\nsrc/b.ts\nsrc/x/c.ts");
    expect((await call(globTool(), { pattern: "*.ts", path: "src/x" }, context)).content).toBe("src/x/c.ts");
    expect((await call(globTool(), { pattern: ".hidden/*" }, context)).content).toBe(".hidden/d.ts");
    expect((await call(globTool(), { pattern: "*.py" }, context)).content).toBe('no files match "*.py" in .');
  });

  test("caps the results with a note", async () => {
    const context = workspaceContext();
    files(context.workspace, Array.from({ length: 12 }, (_, i) => `f${String(i).padStart(2, "0")}.txt`));
    const result = await call(globTool({ maxResults: 10 }), { pattern: "*.txt" }, context);
    expect(result.content.split("\n")).toEqual([
      ...Array.from({ length: 10 }, (_, i) => `f${String(i).padStart(2, "0")}.txt`),
      "[… 2 more files not shown; use a narrower pattern or path]",
    ]);
  });

  test("refuses a path or pattern leaving the workspace, and does not follow links out", async () => {
    const context = workspaceContext();
    const outside = tempDir("agent-outside-");
    files(outside, ["secret.ts"]);
    symlinkSync(outside, join(context.workspace, "link"));
    expect(await failure(globTool(), { pattern: "*", path: ".." }, context)).toBeInstanceOf(WorkspaceEscapeError);
    expect(await failure(globTool(), { pattern: "*", path: "link" }, context)).toBeInstanceOf(WorkspaceEscapeError);
    expect((await failure(globTool(), { pattern: "../*" }, context)).message).toContain("must be relative");
    expect((await failure(globTool(), { pattern: "/etc/*" }, context)).message).toContain("must be relative");
    expect((await call(globTool(), { pattern: "**/*.ts" }, context)).content).toBe('no files match "**/*.ts" in .');
  });
});
