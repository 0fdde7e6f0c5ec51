import type { SandboxLayout } from "./sandbox.ts";

/**
 * bwrap's arguments for a layout: every namespace unshared (network too,
 * unless allowed), the root file system read-only, a private /tmp and /dev,
 * its own /proc (the agent's process and its environment are not visible),
 * the workspace bound writable in workspace-write and read-only in read-only,
 * and `.agent/`, `.git` (and the state root) bound read-only over it; the extra
 * writable paths (the runtime's git: the repository's git data) come before
 * the read-only ones, so those stay read-only inside them. The workspace is
 * bound after /tmp's tmpfs, so a workspace under /tmp is still there.
 */
export function bubblewrapArgs(layout: SandboxLayout, cwd: string, argv: string[]): string[] {
  const args = ["bwrap", "--die-with-parent", "--unshare-all"];
  if (layout.network) args.push("--share-net");
  args.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp");
  args.push(layout.mode === "workspace-write" ? "--bind" : "--ro-bind", layout.workspace, layout.workspace);
  for (const path of layout.writable ?? []) args.push("--bind", path, path);
  for (const path of layout.readOnly) args.push("--ro-bind", path, path);
  args.push("--chdir", cwd, "--", ...argv);
  return args;
}

/** Why bwrap cannot run this layout here (missing, or namespaces refused), or undefined when it can. */
export function probeBubblewrap(layout: SandboxLayout): string | undefined {
  const bwrap = Bun.which("bwrap");
  if (bwrap === null) return "bubblewrap (bwrap) is not installed";
  try {
    const result = Bun.spawnSync(bubblewrapArgs(layout, layout.workspace, ["true"]), { stdout: "ignore", stderr: "pipe" });
    if (result.exitCode === 0) return undefined;
    const reason = result.stderr.toString().trim().split("\n")[0] ?? "";
    return `bwrap cannot create a sandbox here (${reason || `exit code ${result.exitCode}`}); user namespaces may be disabled`;
  } catch (error) {
    return `bwrap could not be started (${(error as Error).message})`;
  }
}
