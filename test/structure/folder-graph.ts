import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/** One import between two files, kept so a cycle can be explained file by file. */
export interface ImportEdge {
  from: string;
  to: string;
}

export interface FolderGraph {
  /** folder -> folder -> the first file import that makes the edge (files relative to the root). */
  edges: Map<string, Map<string, ImportEdge>>;
  files: number;
}

// `import`/`export ... from` at the start of a line (so JSDoc and strings don't count), the
// side-effect form `import "x"`, and `import("x")` both as a value and inside a type; comments may
// sit between the braces.
// `import type` and `export type` are matched on purpose: a type-only edge is still an edge
// between folders, and the layering is about what a folder must know, not what survives
// transpilation.
const STATIC = /^[ \t]*(?:import|export)\s+(?:type\s+)?(?:(?:[\w$*{},\s]|\/\/[^\n]*\n|\/\*[\s\S]*?\*\/)+?\s*from\s*)?["']([^"'\n]+)["']/gm;
const DYNAMIC = /\bimport\(\s*["']([^"'\n]+)["']\s*\)/g;

export function importSpecifiers(source: string): string[] {
  const found: string[] = [];
  for (const re of [STATIC, DYNAMIC]) {
    for (const m of source.matchAll(re)) found.push(m[1]!);
  }
  return found;
}

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...tsFiles(path));
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** `src/<folder>/...` -> `<folder>`; a file directly in src (main.ts) is its own node. */
export function folderOf(srcDir: string, file: string): string {
  return relative(srcDir, file).split(sep)[0]!;
}

/**
 * The folder-level import graph of `srcDir`. Relative specifiers are resolved against the
 * importing file; package imports (`zod`, `node:fs`) are not folders and are skipped. A
 * relative import that names no file throws, so a typo can't hide an edge.
 */
export function folderGraph(srcDir: string, root = dirname(srcDir)): FolderGraph {
  const edges = new Map<string, Map<string, ImportEdge>>();
  const files = tsFiles(srcDir);
  for (const file of files) {
    const from = folderOf(srcDir, file);
    for (const spec of importSpecifiers(readFileSync(file, "utf8"))) {
      if (!spec.startsWith(".")) continue;
      const target = resolve(dirname(file), spec);
      if (!existsSync(target)) throw new Error(`${relative(root, file)} imports ${spec}, which does not exist`);
      const rel = relative(srcDir, target);
      if (rel.startsWith("..")) continue;
      const to = folderOf(srcDir, target);
      if (to === from) continue;
      let out = edges.get(from);
      if (!out) edges.set(from, (out = new Map()));
      if (!out.has(to)) out.set(to, { from: relative(root, file), to: relative(root, target) });
    }
  }
  return { edges, files: files.length };
}

/** Strongly connected components with more than one folder (Tarjan), each sorted by name. */
export function tangledGroups(graph: FolderGraph): string[][] {
  const nodes = new Set<string>();
  for (const [from, out] of graph.edges) {
    nodes.add(from);
    for (const to of out.keys()) nodes.add(to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const v of [...nodes].sort()) if (!index.has(v)) visit(v);
  return groups.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** The shortest cycle through `start` inside `group` (breadth first), as folders a -> ... -> a. */
export function shortestCycle(graph: FolderGraph, group: string[], start: string): string[] {
  const inGroup = new Set(group);
  const parent = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of [...(graph.edges.get(v)?.keys() ?? [])].sort()) {
      if (!inGroup.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(parent.get(path[0]!)!);
        return [...path, start];
      }
      if (!parent.has(w)) {
        parent.set(w, v);
        queue.push(w);
      }
    }
  }
  return [];
}

/**
 * Every folder that is part of a cycle, as one line per cycle with the file imports that make
 * each hop: enough to see which import to move. Empty when the folders form a DAG.
 */
export function describeCycles(graph: FolderGraph): string[] {
  const lines: string[] = [];
  for (const group of tangledGroups(graph)) {
    // One shortest cycle per folder of the group covers every folder at least once.
    const seen = new Set<string>();
    for (const start of group) {
      const canonical = rotateToSmallest(shortestCycle(graph, group, start));
      if (seen.has(canonical.join(">"))) continue;
      seen.add(canonical.join(">"));
      const hops = canonical.slice(0, -1).map((f, i) => {
        const e = graph.edges.get(f)!.get(canonical[i + 1]!)!;
        return `${e.from} -> ${e.to}`;
      });
      lines.push(`${canonical.join(" -> ")}  (${hops.join("; ")})`);
    }
  }
  return lines;
}

function rotateToSmallest(cycle: string[]): string[] {
  const ring = cycle.slice(0, -1);
  let best = 0;
  for (let i = 1; i < ring.length; i++) if (ring[i]! < ring[best]!) best = i;
  const rotated = [...ring.slice(best), ...ring.slice(0, best)];
  return [...rotated, rotated[0]!];
}

// `bun test/structure/folder-graph.ts` prints the cycles (and the edges with --edges), to plan a fix.
if (import.meta.main) {
  const src = resolve(import.meta.dir, "../../src");
  const graph = folderGraph(src);
  if (process.argv.includes("--edges")) {
    for (const [from, out] of [...graph.edges].sort()) console.log(`${from}: ${[...out.keys()].sort().join(" ")}`);
  }
  const groups = tangledGroups(graph);
  for (const g of groups) console.log(`tangled: ${g.join(" ")}`);
  for (const line of describeCycles(graph)) console.log(line);
}
