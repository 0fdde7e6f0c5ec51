import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { editFileTool } from "../../src/tools/edit-file.ts";
import { readFileTool } from "../../src/tools/read-file.ts";
import type { Tool, ToolContext } from "../../src/core/tool.ts";
import { WorkspaceEscapeError } from "../../src/security/workspace-path.ts";
import { writeFileTool } from "../../src/tools/write-file.ts";
import { tempDir } from "../support/temp-dir.ts";
import { call, failure, workspaceContext } from "./helpers.ts";

function put(context: ToolContext, path: string, content: string | Uint8Array) {
  mkdirSync(dirname(join(context.workspace, path)), { recursive: true });
  writeFileSync(join(context.workspace, path), content);
}

/** Every file tool refuses `..` and a symlink pointing outside, before touching anything. */
describe.each([
  ["read_file", readFileTool(), (path: string) => ({ path })],
  ["write_file", writeFileTool(), (path: string) => ({ path, content: "x" })],
  ["edit_file", editFileTool(), (path: string) => ({ path, old_string: "s", new_string: "x" })],
] as Array<[string, Tool, (path: string) => unknown]>)("%s refuses escapes", (_name, tool, input) => {
  test("via .., an absolute path and a symlink", async () => {
    const context = workspaceContext();
    const outside = tempDir("agent-outside-");
    writeFileSync(join(outside, "secret"), "s");
    symlinkSync(outside, join(context.workspace, "link"));
    for (const path of ["../secret", join(outside, "secret"), "link/secret", "link/new"]) {
      expect(await failure(tool, input(path), context)).toBeInstanceOf(WorkspaceEscapeError);
    }
    expect(readFileSync(join(outside, "secret"), "utf8")).toBe("s");
  });
});

describe("read_file", () => {
  const tool = readFileTool({ maxLines: 3, maxChars: 20 });

  test("returns the text as stored; offset and limit pick lines, with a note on how to go on", async () => {
    const context = workspaceContext();
    put(context, "a.txt", "one\ntwo\nthree\nfour\n");
    expect(await call(readFileTool(), { path: "a.txt" }, context)).toEqual({ content: "one\ntwo\nthree\nfour\n" });
    expect((await call(tool, { path: "a.txt" }, context)).content).toBe(
      "one\ntwo\nthree\n[lines 1-3 of 4; continue with offset 4]",
    );
    expect((await call(tool, { path: "a.txt", offset: 2, limit: 2 }, context)).content).toBe(
      "two\nthree\n[lines 2-3 of 4; continue with offset 4]",
    );
    expect((await call(tool, { path: "a.txt", offset: 4 }, context)).content).toBe("four\n");
  });

  test("caps characters with a note; refuses an offset past the end, a directory; shows no binary", async () => {
    const context = workspaceContext();
    put(context, "long.txt", `${"x".repeat(30)}\n`);
    expect((await call(tool, { path: "long.txt" }, context)).content).toBe(
      `${"x".repeat(20)}\n[… 11 more characters truncated; read fewer lines with offset/limit]`,
    );
    expect((await failure(tool, { path: "long.txt", offset: 5 }, context)).message).toBe(
      "offset 5 is past the end of long.txt, which has 1 line",
    );
    mkdirSync(join(context.workspace, "dir"));
    expect((await failure(tool, { path: "dir" }, context)).message).toBe("dir is a directory; use glob to list files");
    put(context, "bin", new Uint8Array([1, 0, 2]));
    expect((await call(tool, { path: "bin" }, context)).content).toBe("bin is a binary file (3 bytes); not shown");
  });

  test("a missing file fails", async () => {
    expect((await failure(tool, { path: "nope.txt" }, workspaceContext())).message).toContain("ENOENT");
  });
});

describe("write_file", () => {
  test("creates parent directories and writes the content byte for byte", async () => {
    const context = workspaceContext();
    const content = "  leading\r\nünïcödé\ttabs\n\n  trailing  ";
    const result = await call(writeFileTool(), { path: "a/b/c.txt", content }, context);
    expect(result.content).toBe(`created a/b/c.txt (${Buffer.byteLength(content)} bytes)`);
    expect(readFileSync(join(context.workspace, "a/b/c.txt"), "utf8")).toBe(content);
    expect((await call(writeFileTool(), { path: "a/b/c.txt", content: "" }, context)).content).toBe("overwrote a/b/c.txt (0 bytes)");
    expect(statSync(join(context.workspace, "a/b/c.txt")).size).toBe(0);
  });
});

describe("edit_file", () => {
  const tool = editFileTool();

  test("replaces a unique match, literally", async () => {
    const context = workspaceContext();
    put(context, "a.ts", "const a = 1;\nconst b = 2;\n");
    const result = await call(tool, { path: "a.ts", old_string: "b = 2", new_string: "b = '$&$1'" }, context);
    expect(result.content).toBe("replaced 1 occurrence in a.ts");
    expect(readFileSync(join(context.workspace, "a.ts"), "utf8")).toBe("const a = 1;\nconst b = '$&$1';\n");
  });

  test("0 or several matches fail with the count; replace_all replaces them all", async () => {
    const context = workspaceContext();
    put(context, "a.ts", "x x x");
    expect((await failure(tool, { path: "a.ts", old_string: "y", new_string: "z" }, context)).message).toBe(
      "old_string was not found in a.ts; read the file and copy the text exactly",
    );
    expect((await failure(tool, { path: "a.ts", old_string: "x", new_string: "z" }, context)).message).toBe(
      "old_string occurs 3 times in a.ts; include more surrounding text to make it unique, or set replace_all",
    );
    expect(readFileSync(join(context.workspace, "a.ts"), "utf8")).toBe("x x x");
    const all = await call(tool, { path: "a.ts", old_string: "x", new_string: "yy", replace_all: true }, context);
    expect(all.content).toBe("replaced 3 occurrences in a.ts");
    expect(readFileSync(join(context.workspace, "a.ts"), "utf8")).toBe("yy yy yy");
  });

  test("keeps a byte-order mark; refuses a file that is not UTF-8 and identical strings", async () => {
    const context = workspaceContext();
    put(context, "bom.txt", "\uFEFFhello");
    await call(tool, { path: "bom.txt", old_string: "hello", new_string: "bye" }, context);
    expect(readFileSync(join(context.workspace, "bom.txt"), "utf8")).toBe("\uFEFFbye");
    put(context, "latin1.txt", new Uint8Array([0x63, 0x61, 0x66, 0xe9]));
    expect((await failure(tool, { path: "latin1.txt", old_string: "ca", new_string: "x" }, context)).message).toBe(
      "latin1.txt is not UTF-8 text; edit_file cannot change it",
    );
    expect((await failure(tool, { path: "bom.txt", old_string: "bye", new_string: "bye" }, context)).message).toContain(
      "identical",
    );
  });
});
