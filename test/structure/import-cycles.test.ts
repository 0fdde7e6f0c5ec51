import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { tempDir } from "../support/temp-dir.ts";
import { describeCycles, folderGraph, importSpecifiers, tangledGroups } from "./folder-graph.ts";

const SRC = resolve(import.meta.dir, "../../src");

function writeTree(files: Record<string, string>): string {
  const root = tempDir();
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return join(root, "src");
}

describe("folder import graph of src/", () => {
  test("no cycle between folders, type-only imports included (docs/architecture.md)", () => {
    const cycles = describeCycles(folderGraph(SRC));
    // Printed in full so the failure says which file import to move down a layer.
    expect(cycles, `folder import cycles:\n${cycles.join("\n")}\nmove the shared type or module down (see docs/architecture.md)`).toEqual([]);
  });

  test("the composition root and the CLI sit on top; core imports no other folder", () => {
    const { edges } = folderGraph(SRC);
    // Each wrong edge as the file import that makes it, so the message says what to move.
    const upward = (allowed: (from: string, to: string) => boolean) =>
      [...edges].flatMap(([from, out]) => [...out].filter(([to]) => !allowed(from, to)).map(([, e]) => `${e.from} -> ${e.to}`));
    const wrong = [
      ...upward((from, to) => to !== "app" || from === "cli"),
      ...upward((from, to) => to !== "cli" || from === "main.ts"),
      ...upward((from) => from !== "core"),
    ];
    expect(wrong, `imports against the layers (only cli/ imports app/, only main.ts imports cli/, core/ imports no folder): move the shared part down, see docs/architecture.md`).toEqual([]);
  });

  test("the scanner sees every import Bun's transpiler sees, in every file", async () => {
    const transpiler = new Bun.Transpiler({ loader: "ts" });
    let files = 0;
    for await (const path of new Bun.Glob("**/*.ts").scan(SRC)) {
      const text = readFileSync(join(SRC, path), "utf8");
      const ours = new Set(importSpecifiers(text));
      // The transpiler rejects a shebang line (main.ts has one); blank it, keeping offsets.
      const missed = transpiler.scanImports(text.replace(/^#!.*/, "")).filter((i) => !ours.has(i.path));
      expect(missed.map((i) => `${path}: ${i.path}`)).toEqual([]);
      files++;
    }
    expect(folderGraph(SRC).files).toBe(files);
  });
});

describe("cycle detection", () => {
  test("a two-folder cycle through a type-only import is named with the file imports of each hop", () => {
    const src = writeTree({
      "src/a/x.ts": 'import type { B } from "../b/y.ts";\nexport type A = B;\n',
      "src/b/y.ts": 'export { z } from "../a/z.ts";\nexport type B = string;\n',
      "src/a/z.ts": "export const z = 1;\n",
      "src/c/free.ts": 'import type { A } from "../a/x.ts";\nexport type C = A;\n',
    });
    const graph = folderGraph(src);
    expect(tangledGroups(graph)).toEqual([["a", "b"]]);
    expect(describeCycles(graph)).toEqual(["a -> b -> a  (src/a/x.ts -> src/b/y.ts; src/b/y.ts -> src/a/z.ts)"]);
  });

  test("longer cycles through multi-line, dynamic and side-effect imports; comments and strings don't count", () => {
    const src = writeTree({
      "src/app/root.ts": 'import {\n  type Mid, // the type\n  /* and */ mid,\n} from "../mid/mid.ts";\nexport const root = mid;\n',
      "src/mid/mid.ts": 'export type Mid = 1;\nexport const mid = () => import("../low/low.ts");\n',
      "src/low/low.ts": 'import "../app/root.ts";\n// import { x } from "../side/side.ts";\nconst s = \'import y from "../side/side.ts"\';\n',
      "src/side/side.ts": 'import { root } from "../app/root.ts";\n',
    });
    const graph = folderGraph(src);
    expect(describeCycles(graph)).toEqual([
      "app -> mid -> low -> app  (src/app/root.ts -> src/mid/mid.ts; src/mid/mid.ts -> src/low/low.ts; src/low/low.ts -> src/app/root.ts)",
    ]);
  });

  test("a folder graph without a cycle passes; imports inside one folder and of packages are not edges", () => {
    const src = writeTree({
      "src/core/a.ts": 'import { z } from "zod";\nimport { b } from "./b.ts";\nexport const a = [z, b];\n',
      "src/core/b.ts": "export const b = 1;\n",
      "src/cli/run.ts": 'import { a } from "../core/a.ts";\nexport const run = a;\n',
      "src/main.ts": 'import { run } from "./cli/run.ts";\nrun;\n',
    });
    const graph = folderGraph(src);
    expect(describeCycles(graph)).toEqual([]);
    expect([...graph.edges].map(([from, out]) => `${from}: ${[...out.keys()].join(" ")}`).sort()).toEqual(["cli: core", "main.ts: cli"]);
  });

  test("an import of a file that does not exist fails the scan, so a typo can't hide an edge", () => {
    const src = writeTree({ "src/a/x.ts": 'import { y } from "../b/missing.ts";\n' });
    expect(() => folderGraph(src)).toThrow("src/a/x.ts imports ../b/missing.ts, which does not exist");
  });
});
