/**
 * Workspace file-write benchmark: what an atomic, race-free write costs, and
 * what the session's ledger adds to it. 1 000 writes of 10 KB files (100 files,
 * each rewritten 10 times), each way timed in the same run on the same tree:
 *
 * - `plain`: a bare `writeFileSync` in place, no fsync — what write_file did
 *   before issue 24; nothing is durable, a crash can leave the file empty;
 * - `synced`: `writeFileSync` and an fsync of the file, still in place (the
 *   cheapest durable write, not atomic);
 * - `atomic`: `WorkspaceFiles.write` — resolve beneath the workspace descriptor,
 *   temp file, fsync, renameat, fsync of the directory: the tools' write with no
 *   ledger, and the floor of a durable atomic write;
 * - `journaled`: edit_file's path with the session's ledger — the version check
 *   against what the agent read, the content before stored and synced, the
 *   content after kept, the journal entry appended and synced, then the atomic
 *   write, then the agent's new version remembered.
 *
 * Five rounds, the order of the ways rotated each round (so no way always
 * follows another's unsynced writes); medians count. The last line is one JSON
 * object: `ratio` is atomic / plain, `syncedRatio` atomic / synced,
 * `journalRatio` journaled / atomic — the cost of journaling and version checks
 * over the same durable write, the figure issue 24's goal (≤ 1.5×) is about —
 * and `journalPlainRatio` journaled / plain, against a write that syncs nothing.
 */
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "../src/core/clock.ts";
import { FileJournalFiles } from "../src/file-journal/file-backend.ts";
import { FileLedger } from "../src/file-journal/file-ledger.ts";
import { checkedWrite } from "../src/tools/checked-write.ts";
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
  // The journaled writes go to a tree of their own: the others' writes would be changes from outside to it.
  const all = [...paths, ...paths.map((path) => `journaled/${path}`)];
  for (const dir of new Set(all.map((path) => path.slice(0, path.lastIndexOf("/"))))) mkdirSync(join(root, dir), { recursive: true });
  for (const path of all) writeFileSync(join(root, path), data);
  const files = new WorkspaceFiles();
  const scope = { workspace: root };
  const stateDir = join(root, ".state");
  const ledger = new FileLedger({ backend: new FileJournalFiles(stateDir), clock: systemClock });
  const context = { identity: "bench", idempotencyKey: "turn-1", workspace: root, signal: new AbortController().signal };
  // Every write a new content, so the journal keeps a new content each time (no dedup to flatter it).
  let counter = 0;
  const next = () => {
    counter += 1;
    const bytes = Buffer.from(data);
    bytes.write(String(counter).padStart(10, "0"));
    return bytes;
  };
  // The agent has read every file once, as the version check requires.
  for (const path of paths) await ledger.saw("bench", `journaled/${path}`, files.read(scope, `journaled/${path}`).bytes!, undefined);
  const ways: Record<string, (path: string) => unknown> = {
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
    atomic: (path) => files.write(scope, path, next()),
    journaled: (path) => checkedWrite(files, ledger, context, "edit_file", `journaled/${path}`, true, () => next()),
  };
  const times: Record<string, number[]> = { plain: [], synced: [], atomic: [], journaled: [] };
  const order = Object.entries(ways);
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [name, write] of [...order.slice(round % order.length), ...order.slice(0, round % order.length)]) {
      const start = performance.now();
      for (let i = 0; i < WRITES; i += 1) await write(paths[i % FILES]!);
      times[name]!.push(performance.now() - start);
    }
  }
  const [plain, synced, atomic, journaled] = [median(times.plain!), median(times.synced!), median(times.atomic!), median(times.journaled!)];
  console.log(
    `${WRITES} writes of ${SIZE / 1024} KB: plain writeFileSync ${plain.toFixed(0)} ms, with fsync ${synced.toFixed(0)} ms, ` +
      `atomic (beneath the workspace descriptor, temp + fsync + rename + directory fsync) ${atomic.toFixed(0)} ms, ` +
      `journaled (version check + journal + atomic) ${journaled.toFixed(0)} ms`,
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
      journaledMs: Math.round(journaled),
      journalRatio: Number((journaled / atomic).toFixed(2)),
      journalPlainRatio: Number((journaled / plain).toFixed(2)),
    }),
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
