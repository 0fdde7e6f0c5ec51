import { afterAll, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, readFileSync, readdirSync, readlinkSync, realpathSync, renameSync, rmdirSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { systemClock } from "../../src/core/clock.ts";
import { FileJournalFiles } from "../../src/file-journal/file-backend.ts";
import { FileLedger } from "../../src/file-journal/file-ledger.ts";
import { applyRewind, planRewind } from "../../src/file-journal/rewind.ts";
import { ProtectedPaths } from "../../src/security/protected-paths.ts";
import { GuardedWriter } from "../../src/workspace-files/guarded-writer.ts";
import { WorkspaceFiles } from "../../src/workspace-files/workspace-files.ts";
import { seededRandom } from "../support/seeded-random.ts";
import { tempDir } from "../support/temp-dir.ts";

// The journal's replay and rewind, fuzzed (docs/security.md#the-guarded-writer):
// an actor standing in for the model's shell swaps directories and files for
// symlinks — into .git, the agent's config and state, a hook's script, outside
// the workspace, to each other — between the writes. The writes are the file
// tools' door (WorkspaceFiles with the fence, symlinks followed beneath the
// workspace) and the replay's (GuardedWriter: agent rewind's writes, removals
// and whole rewinds of a real journal). After every operation the guarded
// places are compared with how they started: not one byte may have changed.

const SEED = Number(process.env.FUZZ_SEED ?? 4343);
const OPERATIONS = 10_000;
const DIRS = ["a", "b", "a/c", "b/d"];
const NAMES = ["f1", "f2", "commondir", "config"];
/** Where the actor points its links: guarded places, outside, and ordinary directories. */
const LINK_TARGETS = [".git", "../.git", "../../.git", ".git/hooks", ".agent", ".agent/agents", ".agent/state", "hooks", "hooks/h.sh", ".git/config", "../outside", "../../outside", "/", "a", "b", "..", "."];

/**
 * Every write fsyncs its file and directory: on a disk under load 20 000 of
 * them take minutes, so the tree is made in memory (tmpfs) where there is one.
 * The system calls, descriptors and links are the same.
 */
function fuzzRoot(): string {
  if (!existsSync("/dev/shm")) return tempDir("agent-guard-fuzz-");
  const root = mkdtempSync("/dev/shm/agent-guard-fuzz-");
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  return root;
}

function world() {
  const root = realpathSync(fuzzRoot());
  const workspace = join(root, "workspace");
  const outside = join(root, "outside");
  const plant = (path: string, text: string) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  };
  plant(join(workspace, ".git", "config"), "[core]\n\tbare = false\n");
  plant(join(workspace, ".git", "HEAD"), "ref: refs/heads/main\n");
  plant(join(workspace, ".git", "hooks", "README"), "hooks\n");
  plant(join(workspace, ".agent", "config.json"), "{}\n");
  plant(join(workspace, ".agent", "agents", "a.md"), "agent\n");
  plant(join(workspace, ".agent", "state", "canary"), "state\n");
  plant(join(workspace, "hooks", "h.sh"), "exit 0\n");
  plant(join(outside, "secret"), "outside\n");
  mkdirSync(join(root, "journal"));
  for (const dir of DIRS) mkdirSync(join(workspace, dir), { recursive: true });
  const fence = new ProtectedPaths({
    workspace,
    stateRoot: join(workspace, ".agent", "state"),
    agentDir: join(workspace, ".agent"),
    hookCommands: ["sh hooks/h.sh"],
  });
  /** A session's journal; a new one now and then, as sessions come and go (and a plan reads the whole journal). */
  let journals = 0;
  const newLedger = () => {
    journals += 1;
    return new FileLedger({ backend: new FileJournalFiles(join(root, "journal", String(journals))), clock: systemClock });
  };
  return { root, workspace, outside, fence, newLedger };
}

/** `rm -rf` that never follows a link: a link is unlinked, a directory emptied entry by entry. */
function removeTree(path: string): void {
  let stat;
  try {
    stat = lstatSync(path);
  } catch {
    return;
  }
  if (!stat.isDirectory()) {
    unlinkSync(path);
    return;
  }
  for (const name of readdirSync(path)) removeTree(join(path, name));
  rmdirSync(path);
}

function realOrNone(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** Every guarded place, read without following a link: what no write of the test may change. */
function guardedState(workspace: string, outside: string): string {
  const lines: string[] = [];
  const visit = (path: string, shown: string) => {
    let stat;
    try {
      stat = lstatSync(path);
    } catch {
      lines.push(`${shown} absent`);
      return;
    }
    if (stat.isSymbolicLink()) lines.push(`${shown} -> ${readlinkSync(path)}`);
    else if (stat.isDirectory()) for (const name of readdirSync(path).sort()) visit(join(path, name), `${shown}/${name}`);
    else lines.push(`${shown} ${stat.size} ${readFileSync(path, "latin1")}`);
  };
  visit(join(workspace, ".git"), ".git");
  visit(join(workspace, ".agent", "agents"), ".agent/agents");
  visit(join(workspace, ".agent", "state"), ".agent/state");
  for (const name of readdirSync(join(workspace, ".agent")).sort()) if (/^config.*\.json$/.test(name)) visit(join(workspace, ".agent", name), `.agent/${name}`);
  visit(join(workspace, "hooks", "h.sh"), "hooks/h.sh");
  visit(outside, "outside");
  // Nothing new beside the workspace either.
  lines.push(`beside: ${readdirSync(join(workspace, "..")).sort().join(" ")}`);
  return lines.join("\n");
}

// "kernel": openat2 first, as on Linux; "walk": the component-by-component walk other systems use.
test.each(["kernel", "walk"] as const)(`${OPERATIONS} replayed and tool writes against an actor swapping directories and symlinks: none lands in a guarded place (%s resolver, seed ${SEED})`, async (resolver) => {
  const { workspace, outside, fence, newLedger } = world();
  let ledger = newLedger();
  const random = seededRandom(SEED);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const files = new WorkspaceFiles({ resolver });
  const toolScope = { workspace, fence };
  const writer = new GuardedWriter(files, { workspace }, fence);
  const start = guardedState(workspace, outside);
  const outcomes = new Map<string, number>();
  const count = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
  const path = () => `${pick(DIRS)}/${pick(NAMES)}`;

  /** The actor: one change to the tree, as a sandboxed shell could make it (never through a link: it owns only the workspace's own entries). */
  const act = () => {
    const target = random() < 0.5 ? pick(DIRS) : path();
    const absolute = join(workspace, target);
    // Through a link the actor would be changing the link's destination, which the sandbox keeps read-only.
    if (realOrNone(dirname(absolute)) !== dirname(absolute)) return;
    try {
      removeTree(absolute);
      const roll = random();
      if (roll < 0.55) {
        // Depth-relative or absolute, into a guarded place, outside, or elsewhere inside.
        const link = pick(LINK_TARGETS);
        symlinkSync(link.startsWith("/") ? link : random() < 0.3 ? join(workspace, link) : link, absolute);
      } else if (roll < 0.8) {
        mkdirSync(absolute, { recursive: true });
      } else if (roll < 0.9) {
        writeFileSync(absolute, "actor\n");
      } else {
        // A directory moved in from elsewhere in the workspace.
        const from = join(workspace, pick(DIRS));
        if (from !== absolute && !absolute.startsWith(`${from}/`) && realOrNone(dirname(from)) === dirname(from)) {
          try {
            renameSync(from, absolute);
          } catch {
            // Gone already, or not a move the file system makes.
          }
        }
      }
    } catch (error) {
      // A parent that is a file now, or gone: the shell's command fails, as it would.
      if (!["ENOTDIR", "ENOENT", "EEXIST"].includes((error as { code?: string }).code ?? "")) throw error;
    }
  };

  const attempt = async (what: string, operation: () => unknown) => {
    try {
      await operation();
      count(`${what}: written`);
    } catch (error) {
      count(`${what}: ${(error as { code?: string }).code ?? (error as Error).name}`);
    }
  };

  let operations = 0;
  let since = new Date().toISOString();
  while (operations < OPERATIONS) {
    act();
    const roll = random();
    if (roll < 0.4) {
      // The file tools' door, journaled as the tools journal: a path as the model names it.
      const target = path();
      const data = Buffer.from(`tool ${operations}\n`);
      await attempt("tool write", async () => {
        let before: Buffer | undefined;
        try {
          before = files.read(toolScope, target).bytes ?? undefined;
        } catch (error) {
          if ((error as { code?: string }).code !== "ENOENT") throw error;
        }
        await ledger.journal({ agent: "lead", kind: "tool" }, target, before, data);
        files.write(toolScope, target, data);
      });
      operations += 1;
    } else if (roll < 0.7) {
      await attempt("replay write", () => writer.write(path(), Buffer.from(`replay ${operations}\n`)));
      operations += 1;
    } else if (roll < 0.8) {
      await attempt("replay remove", () => writer.remove(path()));
      operations += 1;
    } else {
      // A whole rewind, the actor swapping between its plan and its writes.
      const steps = (await planRewind(ledger, writer, since)).filter((step) => !step.fatal && step.skipped === undefined);
      act();
      await attempt("rewind", () => applyRewind(ledger, writer, steps, `fuzz-${operations}`));
      operations += Math.max(1, steps.length);
      if (random() < 0.3) since = new Date().toISOString();
      if (random() < 0.1) ledger = newLedger();
    }
    const now = guardedState(workspace, outside);
    if (now !== start) throw new Error(`after ${operations} operations (seed ${SEED}) a guarded place changed:\n${now}\n--- was ---\n${start}\noutcomes: ${JSON.stringify([...outcomes])}`);
  }

  const total = (prefix: string) => [...outcomes].filter(([key]) => key.startsWith(prefix)).reduce((sum, [, n]) => sum + n, 0);
  // The writes did happen, and so did the refusals: both doors were exercised.
  expect(total("tool write: written")).toBeGreaterThan(500);
  expect(total("replay write: written")).toBeGreaterThan(500);
  expect(total("replay write: SYMLINK_ON_PATH")).toBeGreaterThan(100);
  expect(total("tool write: GUARDED_TARGET") + total("tool write: WORKSPACE_ESCAPE")).toBeGreaterThan(100);
  expect(total("rewind: written")).toBeGreaterThan(50);
  expect(operations).toBeGreaterThanOrEqual(OPERATIONS);
  process.stderr.write(`guarded writer fuzz (${resolver}, seed ${SEED}): ${operations} operations, ${JSON.stringify(Object.fromEntries([...outcomes].sort()))}\n`);
}, 300_000);
