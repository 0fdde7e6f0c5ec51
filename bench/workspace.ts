/**
 * Workspace file-write benchmark: what an atomic, race-free write costs. 1 000
 * writes of 10 KB files (100 files, each rewritten 10 times) through
 * `WorkspaceFiles.write` — resolve beneath the workspace descriptor, temp file,
 * fsync, renameat, fsync of the directory — against, in the same run on the same
 * tree, a plain `writeFileSync` (what write_file did before, no fsync) and a
 * `writeFileSync` followed by an fsync of the file (the cheapest durable write,
 * still in place). Five rounds, interleaved; medians count.
 *
 * The last line is one JSON object: `ratio` is atomic / plain, `syncedRatio`
 * atomic / plain-with-fsync.
 */
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WorkspaceFiles } from "../src/workspace-files/workspace-files.ts";

const WRITES = 1_000;
const FILES = 100;
const SIZE = 10 * 1024;
const ROUNDS = 5;

const root = realpathSync(mkdtempSync(join(tmpdir(), "agent-bench-workspace-")));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

try {
  const data = Buffer.alloc(SIZE, "x");
  const paths = Array.from({ length: FILES }, (_, i) => `src/dir${i % 10}/file${i}.ts`);
  for (const dir of new Set(paths.map((path) => path.slice(0, path.lastIndexOf("/"))))) mkdirSync(join(root, dir), { recursive: true });
  for (const path of paths) writeFileSync(join(root, path), data);
  const files = new WorkspaceFiles();
  const scope = { workspace: root };
  const ways: Record<string, (path: string) => void> = {
    plain: (path) => writeFileSync(join(root, path), data),
    synced: (path) => {
      const fd = openSync(join(root, path), "w");
      try {
        writeFileSync(fd, data);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    },
    atomic: (path) => files.write(scope, path, data),
  };
  const times: Record<string, number[]> = { plain: [], synced: [], atomic: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [name, write] of Object.entries(ways)) {
      const start = performance.now();
      for (let i = 0; i < WRITES; i += 1) write(paths[i % FILES]!);
      times[name]!.push(performance.now() - start);
    }
  }
  const [plain, synced, atomic] = [median(times.plain!), median(times.synced!), median(times.atomic!)];
  console.log(
    `${WRITES} writes of ${SIZE / 1024} KB: plain writeFileSync ${plain.toFixed(0)} ms, with fsync ${synced.toFixed(0)} ms, ` +
      `atomic (beneath the workspace descriptor, temp + fsync + rename + directory fsync) ${atomic.toFixed(0)} ms`,
  );
  console.log(
    JSON.stringify({
      writes: WRITES,
      plainMs: Math.round(plain),
      syncedMs: Math.round(synced),
      atomicMs: Math.round(atomic),
      atomicUsPerWrite: Math.round((atomic * 1000) / WRITES),
      ratio: Number((atomic / plain).toFixed(2)),
      syncedRatio: Number((atomic / synced).toFixed(2)),
    }),
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
