import { describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveInWorkspace, WorkspaceEscapeError } from "../../src/security/workspace-path.ts";
import { tempDir } from "../support/temp-dir.ts";

function setup() {
  const root = realpathSync(tempDir("agent-wp-"));
  const workspace = join(root, "ws");
  const outside = join(root, "outside");
  mkdirSync(join(workspace, "src"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(workspace, "src/a.ts"), "a");
  writeFileSync(join(outside, "secret"), "s");
  return { workspace, outside };
}

describe("resolveInWorkspace", () => {
  test("relative, absolute and not-yet-existing paths inside resolve to real paths", () => {
    const { workspace } = setup();
    expect(resolveInWorkspace(workspace, "src/a.ts")).toEqual({ absolute: join(workspace, "src/a.ts"), display: "src/a.ts" });
    expect(resolveInWorkspace(workspace, join(workspace, "src/a.ts")).display).toBe("src/a.ts");
    expect(resolveInWorkspace(workspace, "src/../src/new/deep/b.ts").display).toBe("src/new/deep/b.ts");
    expect(resolveInWorkspace(workspace, ".").display).toBe(".");
  });

  test("a symlink inside pointing inside is followed", () => {
    const { workspace } = setup();
    symlinkSync(join(workspace, "src"), join(workspace, "link"));
    expect(resolveInWorkspace(workspace, "link/a.ts").display).toBe("src/a.ts");
  });

  test("escapes via .., an absolute path, a symlink and a dangling symlink are refused", () => {
    const { workspace, outside } = setup();
    symlinkSync(outside, join(workspace, "out-dir"));
    symlinkSync(join(outside, "not-yet"), join(workspace, "dangling"));
    for (const path of ["../outside/secret", "src/../../outside", outside, "out-dir/secret", "out-dir/new.txt", "dangling"]) {
      expect(() => resolveInWorkspace(workspace, path)).toThrow(WorkspaceEscapeError);
    }
    // Told to the model without where the link leads or where the user's directories are.
    expect(() => resolveInWorkspace(workspace, "out-dir/secret")).toThrow('path "out-dir/secret" is outside the workspace (through a symbolic link); file tools only work on paths inside the workspace');
    expect(() => resolveInWorkspace(workspace, "../outside/secret")).toThrow('path "../outside/secret" is outside the workspace; file tools only work on paths inside the workspace');
    for (const path of ["out-dir/secret", "../outside/secret", "dangling"]) {
      const error = (() => {
        try {
          resolveInWorkspace(workspace, path);
        } catch (caught) {
          return caught as Error;
        }
      })();
      expect(error?.message).not.toContain(outside);
      expect(error?.message).not.toContain(workspace);
    }
  });

  test("a file named like ..foo is inside", () => {
    const { workspace } = setup();
    expect(resolveInWorkspace(workspace, "..foo").display).toBe("..foo");
  });
});
