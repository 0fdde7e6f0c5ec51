import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ProtectedPathError } from "../../src/security/protected-paths.ts";
import { globTool } from "../../src/tools/glob.ts";
import { WorkspaceEscapeError } from "../../src/security/workspace-path.ts";
import { tempDir } from "../support/temp-dir.ts";
import { call, failure, fencedContext, workspaceContext } from "./helpers.ts";

function files(workspace: string, paths: string[], content = "") {
  for (const path of paths) {
    mkdirSync(dirname(join(workspace, path)), { recursive: true });
    writeFileSync(join(workspace, path), content);
  }
}

/** Gives the files modification times in the order listed, oldest first. */
function aged(workspace: string, paths: string[]) {
  paths.forEach((path, i) => utimesSync(join(workspace, path), 1_700_000_000 + i * 60, 1_700_000_000 + i * 60));
}

describe("glob", () => {
  test("lists matching files relative to the workspace, newest first or by name, hidden ones left out", async () => {
    const context = workspaceContext();
    files(context.workspace, ["src/b.ts", "src/a.ts", "src/x/c.ts", "README.md", ".hidden/d.ts", "src/e.js"]);
    aged(context.workspace, ["src/x/c.ts", "src/a.ts", "src/b.ts"]);
    expect((await call(globTool(), { pattern: "**/*.ts" }, context)).content).toBe("src/b.ts\nsrc/a.ts\nsrc/x/c.ts");
    expect((await call(globTool(), { pattern: "**/*.ts", sort: "name" }, context)).content).toBe("src/a.ts\nsrc/b.ts\nsrc/x/c.ts");
    expect((await call(globTool(), { pattern: "src/**/*.ts", sort: "name" }, context)).content).toBe("src/a.ts\nsrc/b.ts\nsrc/x/c.ts");
    expect((await call(globTool(), { pattern: "./src/*.{js,ts}", sort: "name" }, context)).content).toBe("src/a.ts\nsrc/b.ts\nsrc/e.js");
    expect((await call(globTool(), { pattern: "*.ts", path: "src/x" }, context)).content).toBe("src/x/c.ts");
    expect((await call(globTool(), { pattern: ".hidden/*" }, context)).content).toBe(".hidden/d.ts");
    expect((await call(globTool(), { pattern: "*.py" }, context)).content).toBe('no files match "*.py" in .');
  });

  test("caps the results with a note", async () => {
    const context = workspaceContext();
    files(context.workspace, Array.from({ length: 12 }, (_, i) => `f${String(i).padStart(2, "0")}.txt`));
    const result = await call(globTool({ maxResults: 10 }), { pattern: "*.txt", sort: "name" }, context);
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

  test("leaves out what .gitignore and .ignore files exclude, nested ones too, unless include_ignored", async () => {
    const context = workspaceContext();
    files(context.workspace, [
      ".gitignore",
      "node_modules/pkg/index.ts",
      "src/main.ts",
      "src/gen/.gitignore",
      "src/gen/out.ts",
      "src/gen/keep.ts",
      "build/app.ts",
      "test/a.test.ts",
      "test/.ignore",
      "test/fixtures/big.ts",
    ]);
    writeFileSync(join(context.workspace, ".gitignore"), "node_modules\n/build/\n");
    writeFileSync(join(context.workspace, "src/gen/.gitignore"), "*.ts\n!keep.ts\n");
    writeFileSync(join(context.workspace, "test/.ignore"), "fixtures/\n");
    const listed = (input: Record<string, unknown>) => call(globTool(), { sort: "name", ...input }, context).then((r) => r.content);
    expect(await listed({ pattern: "**/*.ts" })).toBe("src/gen/keep.ts\nsrc/main.ts\ntest/a.test.ts");
    expect(await listed({ pattern: "**/*.ts", include_ignored: true })).toBe(
      [
        "build/app.ts",
        "node_modules/pkg/index.ts",
        "src/gen/keep.ts",
        "src/gen/out.ts",
        "src/main.ts",
        "test/a.test.ts",
        "test/fixtures/big.ts",
      ].join("\n"),
    );
    // A directory named explicitly is listed by the rules found inside it.
    expect(await listed({ pattern: "**/*.ts", path: "node_modules" })).toBe("node_modules/pkg/index.ts");
  });

  test("never lists the state root and refuses a path in it", async () => {
    const context = fencedContext();
    files(context.workspace, [".agent/agents/lead.jsonl", ".agent/config.json", "a.json"]);
    expect((await call(globTool(), { pattern: ".agent/**" }, context)).content).toBe('no files match ".agent/**" in .');
    expect((await call(globTool(), { pattern: "**/*.json*", include_ignored: true }, context)).content).toBe("a.json");
    expect(await failure(globTool(), { pattern: "*", path: ".agent" }, context)).toBeInstanceOf(ProtectedPathError);
    expect(await failure(globTool(), { pattern: "*", path: ".agent/agents" }, context)).toBeInstanceOf(ProtectedPathError);
  });
});
