import { describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { TEMP_PREFIX } from "../../src/workspace-files/atomic-write.ts";
import { WorkspaceFiles } from "../../src/workspace-files/workspace-files.ts";
import { GuardedTargetError } from "../../src/workspace-files/guarded-landing.ts";
import { fencedContext, workspaceContext } from "../tools/helpers.ts";
import { ProtectedPathError } from "../../src/security/protected-paths.ts";
import { waitUntil } from "../support/deadline.ts";

const bytes = (text: string) => Buffer.from(text, "utf8");

describe.each(["kernel", "walk"] as const)("WorkspaceFiles (%s)", (resolver) => {
  const files = new WorkspaceFiles({ resolver });

  test("a write replaces the file by rename (a new inode), keeps its mode, and leaves no temp file", () => {
    const scope = workspaceContext();
    const path = join(scope.workspace, "run.sh");
    writeFileSync(path, "old");
    chmodSync(path, 0o751);
    const before = statSync(path).ino;
    expect(files.write(scope, "run.sh", bytes("new"))).toEqual({ display: "run.sh", created: false });
    expect(readFileSync(path, "utf8")).toBe("new");
    expect(statSync(path).mode & 0o7777).toBe(0o751);
    expect(statSync(path).ino).not.toBe(before);
    expect(readdirSync(scope.workspace)).toEqual(["run.sh"]);
  });

  test("a new file gets 0666 less the umask, its directories are made", () => {
    const scope = workspaceContext();
    expect(files.write(scope, "a/b/new.txt", bytes("x"))).toEqual({ display: "a/b/new.txt", created: true });
    expect(statSync(join(scope.workspace, "a/b/new.txt")).mode & 0o777).toBe(0o666 & ~process.umask());
  });

  test.skipIf(process.getuid?.() !== 0)("the owner is kept where the process may give it (root)", () => {
    const scope = workspaceContext();
    const path = join(scope.workspace, "owned");
    writeFileSync(path, "old");
    chownSync(path, 4321, 4322);
    files.write(scope, "owned", bytes("new"));
    expect([statSync(path).uid, statSync(path).gid]).toEqual([4321, 4322]);
  });

  test("a symlink is written through to its destination inside; the link stays a link", () => {
    const scope = workspaceContext();
    mkdirSync(join(scope.workspace, "real"));
    writeFileSync(join(scope.workspace, "real/config.json"), "{}");
    symlinkSync("real/config.json", join(scope.workspace, "config.json"));
    symlinkSync("real/later.txt", join(scope.workspace, "later.txt"));
    expect(files.write(scope, "config.json", bytes('{"a":1}'))).toEqual({ display: "real/config.json", created: false });
    expect(lstatSync(join(scope.workspace, "config.json")).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(scope.workspace, "real/config.json"), "utf8")).toBe('{"a":1}');
    // A dangling link inside: writing through it creates its destination.
    expect(files.write(scope, "later.txt", bytes("made"))).toEqual({ display: "real/later.txt", created: true });
    expect(readlinkSync(join(scope.workspace, "later.txt"))).toBe("real/later.txt");
    expect(files.edit(scope, "config.json", (old) => Buffer.concat([old, bytes("\n")])).display).toBe("real/config.json");
    expect(readFileSync(join(scope.workspace, "real/config.json"), "utf8")).toBe('{"a":1}\n');
  });

  test("a file with several hard links is written in place: every name sees the new content", () => {
    const scope = workspaceContext();
    const path = join(scope.workspace, "a.txt");
    writeFileSync(path, "old content, longer");
    linkSync(path, join(scope.workspace, "b.txt"));
    const inode = statSync(path).ino;
    files.write(scope, "a.txt", bytes("new"));
    expect(statSync(path).ino).toBe(inode);
    expect(readFileSync(join(scope.workspace, "b.txt"), "utf8")).toBe("new");
  });

  test("a directory, or a path ending in one, is refused; an edit of a missing file fails with ENOENT", () => {
    const scope = workspaceContext();
    mkdirSync(join(scope.workspace, "dir"));
    expect(() => files.write(scope, "dir", bytes("x"))).toThrow("dir is a directory; give a file path");
    expect(() => files.write(scope, "dir/..", bytes("x"))).toThrow("is a directory");
    expect(() => files.write(scope, "dir/new/", bytes("x"))).toThrow("dir/new/ is a directory");
    expect(() => files.write(scope, "dir/.", bytes("x"))).toThrow("is a directory");
    expect(() => files.edit(scope, "nope.txt", (old) => old)).toThrow("ENOENT");
    expect(readdirSync(join(scope.workspace, "dir"))).toEqual([]);
  });

  test("a temp file a dead writer left over a minute ago is removed by the next write into its directory; a fresh one stays", () => {
    const scope = workspaceContext();
    const dead = deadPid();
    const stale = join(scope.workspace, `${TEMP_PREFIX}${dead}-1.tmp`);
    const fresh = join(scope.workspace, `${TEMP_PREFIX}${dead}-2.tmp`);
    writeFileSync(stale, "half");
    writeFileSync(fresh, "half");
    const old = new Date(Date.now() - 120_000);
    utimesSync(stale, old, old);
    new WorkspaceFiles({ resolver }).write(scope, "x.txt", bytes("x"));
    expect(readdirSync(scope.workspace).sort()).toEqual([`${TEMP_PREFIX}${dead}-2.tmp`, "x.txt"]);
  });

  test("the fence is asked about where the descriptor really is, not only about the path as written", () => {
    const scope = fencedContext();
    mkdirSync(scope.stateRoot, { recursive: true });
    writeFileSync(join(scope.stateRoot, "history"), "secret");
    symlinkSync(".agent", join(scope.workspace, "innocent"));
    expect(() => files.read(scope, "innocent/history")).toThrow(ProtectedPathError);
    expect(() => files.write(scope, "innocent/history", bytes("x"))).toThrow(ProtectedPathError);
    expect(readFileSync(join(scope.stateRoot, "history"), "utf8")).toBe("secret");
  });

  test("a write landing on a guarded file (git's, the agent's config) through a symlink is refused; by its own path it goes on", () => {
    const scope = fencedContext();
    mkdirSync(join(scope.workspace, ".git"));
    writeFileSync(join(scope.workspace, ".git/config"), "[core]\n");
    symlinkSync(".git", join(scope.workspace, "innocent"));
    symlinkSync(".git/config", join(scope.workspace, "settings.ini"));
    expect(() => files.write(scope, "innocent/config", bytes("[core]\n\tfsmonitor = evil\n"))).toThrow(GuardedTargetError);
    expect(() => files.edit(scope, "settings.ini", (old) => Buffer.concat([old, bytes("x")]))).toThrow(
      `path "settings.ini" leads to .git/config (`,
    );
    expect(readFileSync(join(scope.workspace, ".git/config"), "utf8")).toBe("[core]\n");
    // Named directly, the permission check saw it; the door does not refuse it again.
    expect(files.write(scope, "./.git/config", bytes("[core]\n\tbare = false\n")).display).toBe(".git/config");
  });

  test("replace waits for `ready` before the file changes (its temp written meanwhile); a failed `ready` changes nothing", async () => {
    const scope = workspaceContext();
    const path = join(scope.workspace, "notes.txt");
    writeFileSync(path, "old");
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // A `ready` that tells when it is waited on: from then on the door waits for the journal.
    let waitedOn = false;
    const ready = gate.then(() => {});
    const then = ready.then.bind(ready);
    ready.then = ((...args: Parameters<typeof then>) => ((waitedOn = true), then(...args))) as typeof ready.then;
    const pending = files.replace(scope, "notes.txt", true, async (_display, current) => ({ data: bytes(`${current}+new`), ready }));
    // The temp file is written while the journal is being made durable; the target is not replaced before it is.
    await waitUntil(() => waitedOn && readdirSync(scope.workspace).some((name) => name.startsWith(TEMP_PREFIX)), "the temp file written and `ready` waited on");
    expect(readFileSync(path, "utf8")).toBe("old");
    release();
    expect(await pending).toMatchObject({ display: "notes.txt", created: false });
    expect(readFileSync(path, "utf8")).toBe("old+new");

    const failed = files.replace(scope, "notes.txt", true, async () => ({ data: bytes("lost"), ready: Promise.reject(new Error("journal: disk full")) }));
    await expect(failed).rejects.toThrow("journal: disk full");
    expect(readFileSync(path, "utf8")).toBe("old+new");
    expect(readdirSync(scope.workspace)).toEqual(["notes.txt"]);
  });
});

/** A pid no process has now. */
function deadPid(): number {
  for (let pid = 4_000_000; ; pid -= 1) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ESRCH") return pid;
    }
  }
}
