import { describe, expect, test } from "bun:test";
import { closeSync, existsSync, mkdirSync, readFileSync, readlinkSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WorkspaceEscapeError } from "../../src/security/workspace-path.ts";
import { O_DIRECTORY, O_RDONLY, atCalls } from "../../src/workspace-files/at-calls.ts";
import { openBeneath, openRoot } from "../../src/workspace-files/open-beneath.ts";
import { errnoCode } from "../../src/storage/libc.ts";
import { tempDir } from "../support/temp-dir.ts";

// Both resolvers: openat2 (the kernel) with the walk behind it, and the walk alone
// (what macOS and old kernels use), on the same layouts.

const calls = atCalls()!;

function setup() {
  const base = realpathSync(tempDir("agent-beneath-"));
  const workspace = join(base, "ws");
  const outside = join(base, "outside");
  mkdirSync(join(workspace, "src"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(workspace, "src/a.ts"), "inside");
  writeFileSync(join(outside, "secret"), "outside");
  return { workspace, outside };
}

describe.each(["kernel", "walk"] as const)("openBeneath (%s)", (resolver) => {
  /** Where `path` opened beneath `workspace` lands (its real path), or the error. */
  function landing(workspace: string, path: string, flags = O_RDONLY, createDirs = false): string {
    const root = openRoot(workspace, calls, resolver);
    try {
      const fd = openBeneath(root, path, flags, createDirs);
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } finally {
        closeSync(fd);
      }
    } finally {
      root.close();
    }
  }

  test("relative and absolute paths inside open what they name; the root itself opens", () => {
    const { workspace } = setup();
    expect(landing(workspace, "src/a.ts")).toBe(join(workspace, "src/a.ts"));
    expect(landing(workspace, join(workspace, "src/a.ts"))).toBe(join(workspace, "src/a.ts"));
    expect(landing(workspace, "src/../src/./a.ts")).toBe(join(workspace, "src/a.ts"));
    expect(landing(workspace, ".", O_RDONLY | O_DIRECTORY)).toBe(workspace);
    expect(landing(workspace, "")).toBe(workspace);
  });

  test("`..` above the root and absolute paths outside are refused", () => {
    const { workspace, outside } = setup();
    for (const path of ["../outside/secret", "src/../../outside/secret", "..", join(outside, "secret"), "/etc/passwd"]) {
      expect(() => landing(workspace, path)).toThrow(WorkspaceEscapeError);
    }
  });

  test("a symlink inside pointing inside is followed, relative or absolute, in any component, through a chain", () => {
    const { workspace } = setup();
    symlinkSync("src", join(workspace, "rel"));
    symlinkSync(join(workspace, "src"), join(workspace, "abs"));
    symlinkSync("../rel/a.ts", join(workspace, "src/up"));
    symlinkSync("abs/up", join(workspace, "chain"));
    for (const path of ["rel/a.ts", "abs/a.ts", "src/up", "chain", "rel/../rel/a.ts"]) {
      expect(landing(workspace, path)).toBe(join(workspace, "src/a.ts"));
    }
  });

  test("a symlink leading outside is refused, as a directory or as the file, relative or absolute", () => {
    const { workspace, outside } = setup();
    symlinkSync(outside, join(workspace, "out-abs"));
    symlinkSync("../outside", join(workspace, "out-rel"));
    symlinkSync("../../outside/secret", join(workspace, "src/secret"));
    for (const path of ["out-abs/secret", "out-rel/secret", "src/secret", "out-abs", "out-rel/../ws/src/a.ts"]) {
      expect(() => landing(workspace, path)).toThrow(WorkspaceEscapeError);
    }
    expect(() => landing(workspace, "out-rel/made", O_RDONLY | O_DIRECTORY, true)).toThrow(WorkspaceEscapeError);
    expect(existsSync(join(outside, "made"))).toBe(false);
  });

  test("a dangling symlink: inside, missing (ENOENT); outside, refused; a loop, ELOOP", () => {
    const { workspace, outside } = setup();
    symlinkSync("src/missing", join(workspace, "dangling"));
    symlinkSync(join(outside, "not-yet"), join(workspace, "dangling-out"));
    symlinkSync("loop", join(workspace, "loop"));
    expect(() => landing(workspace, "dangling")).toThrow(expect.objectContaining({ code: "ENOENT" }));
    expect(() => landing(workspace, "dangling-out")).toThrow(WorkspaceEscapeError);
    expect(() => landing(workspace, "loop")).toThrow(expect.objectContaining({ code: "ELOOP" }));
  });

  test("missing directories are made beneath the root, also through a link inside; never outside", () => {
    const { workspace, outside } = setup();
    symlinkSync("src", join(workspace, "rel"));
    expect(landing(workspace, "new/deep/er", O_RDONLY | O_DIRECTORY, true)).toBe(join(workspace, "new/deep/er"));
    expect(landing(workspace, "rel/made", O_RDONLY | O_DIRECTORY, true)).toBe(join(workspace, "src/made"));
    symlinkSync(outside, join(workspace, "out"));
    expect(() => landing(workspace, "out/x/y", O_RDONLY | O_DIRECTORY, true)).toThrow(WorkspaceEscapeError);
    expect(existsSync(join(outside, "x"))).toBe(false);
  });

  test("/proc magic links are never followed: a link to one, or a root inside /proc", () => {
    const { workspace } = setup();
    symlinkSync("/proc/self/cwd", join(workspace, "cwd"));
    symlinkSync("/proc/self/root", join(workspace, "root"));
    expect(() => landing(workspace, "cwd/package.json")).toThrow(WorkspaceEscapeError);
    expect(() => landing(workspace, "root/etc/passwd")).toThrow(WorkspaceEscapeError);
    // Beneath /proc/<pid> itself, `cwd` and `root` are magic links: the kernel refuses them (RESOLVE_NO_MAGICLINKS),
    // and the walk, reading the link, finds a path outside.
    for (const path of ["cwd/package.json", "root/etc/passwd", "exe"]) {
      expect(() => landing("/proc/self", path)).toThrow(WorkspaceEscapeError);
    }
    expect(readFileSync(join(workspace, "src/a.ts"), "utf8")).toBe("inside");
  });
});

// openat2 with RESOLVE_BENEATH fails with EAGAIN when any rename on the system
// races a `..` of the lookup (it cannot prove the `..` stayed beneath); errno 11
// used to be named EWOULDBLOCK here, so the EAGAIN went out as an error instead
// of being retried. A rename storm elsewhere makes it happen every few hundred opens.
test("errno 11 is EAGAIN and 95 ENOTSUP, as node names them", () => {
  expect(errnoCode(11)).toBe("EAGAIN");
  expect(errnoCode(95)).toBe("ENOTSUP");
});

test("paths with `..` open beneath the root while another process renames as fast as it can (EAGAIN retried)", async () => {
  const { workspace } = setup();
  const elsewhere = realpathSync(tempDir("agent-rename-storm-"));
  mkdirSync(join(elsewhere, "x"));
  mkdirSync(join(elsewhere, "y"));
  const storm = Bun.spawn([process.execPath, join(import.meta.dir, "..", "e2e", "flip-dir.ts"), join(elsewhere, "x"), join(elsewhere, "y")], { stdout: "pipe" });
  const failures = new Map<string, number>();
  let opens = 0;
  try {
    await storm.stdout.getReader().read();
    const root = openRoot(workspace, calls, "kernel");
    try {
      for (const end = Date.now() + 2_000; Date.now() < end; ) {
        opens += 1;
        try {
          const fd = openBeneath(root, "src/../src/../src/a.ts", O_RDONLY);
          const landed = readlinkSync(`/proc/self/fd/${fd}`);
          closeSync(fd);
          if (landed !== join(workspace, "src/a.ts")) failures.set(landed, (failures.get(landed) ?? 0) + 1);
        } catch (error) {
          const code = String((error as { code?: string }).code);
          failures.set(code, (failures.get(code) ?? 0) + 1);
        }
      }
    } finally {
      root.close();
    }
  } finally {
    storm.kill("SIGTERM");
    await storm.exited;
  }
  expect(opens).toBeGreaterThan(1_000);
  expect(Object.fromEntries(failures)).toEqual({});
}, 30_000);
