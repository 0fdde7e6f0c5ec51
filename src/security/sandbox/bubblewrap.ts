import { isAbsolute, relative } from "node:path";
import { type HiddenPath, existingHiddenPaths } from "./hidden-paths.ts";
import type { SandboxLayout } from "./sandbox.ts";
import { printfEscaped, seccompFilter } from "./seccomp.ts";

/**
 * Starts bwrap with the seccomp program on fd 3, the command's own stdin kept on
 * 0: `$0` is the program as a printf format, piped in, and the rest is bwrap's
 * argv. No file holds the program, so there is none to clean up or to swap.
 */
const WITH_SECCOMP_FD = 'exec 4<&0; printf "$0" | { exec 3<&0 0<&4 4<&-; exec "$@"; }';

/**
 * bwrap's arguments for a layout, behind the small `sh` that hands it the
 * seccomp filter: every namespace unshared (network too, unless allowed), the
 * root file system read-only, a private /tmp and /dev, its own /proc (the
 * agent's process and its environment are not visible), a fresh tmpfs over each
 * directory of host sockets (/run, the runtime dir, the store's socket dir) with
 * the allowed sockets bound back, the workspace bound writable in
 * workspace-write and read-only in read-only, and `.agent/`, `.git` (and the
 * state root) bound read-only over it; the extra writable paths (the runtime's
 * git: the repository's git data) come before the read-only ones, so those stay
 * read-only inside them. The workspace is bound after the tmpfs mounts, so a
 * workspace under /tmp is still there. The filter refuses new unix sockets
 * unless some are allowed (seccomp.ts). Throws where there is no filter for
 * this architecture; probeBubblewrap says so first.
 */
export function bubblewrapArgs(layout: SandboxLayout, cwd: string, argv: string[]): string[] {
  const filter = filterFor(layout);
  if (filter === undefined) throw new Error(`no seccomp filter for ${process.arch}`);
  return ["sh", "-c", WITH_SECCOMP_FD, printfEscaped(filter), "bwrap", ...bwrapOptions(layout, cwd, "3"), "--", ...argv];
}

/** bwrap's options for a layout, the seccomp program read from `seccompFd`. */
function bwrapOptions(layout: SandboxLayout, cwd: string, seccompFd: string): string[] {
  const args = ["--die-with-parent", "--unshare-all"];
  if (layout.network) args.push("--share-net");
  args.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp");
  for (const path of layout.hidden) args.push("--tmpfs", path);
  for (const path of [...layout.revealed, ...layout.unixSockets]) args.push("--ro-bind", path, path);
  // A concealed path outside what is bound next is hidden now, so a workspace
  // under it (a checkout inside a hidden directory) is bound back over it; one
  // inside the workspace (the state root) is hidden after, over its bind.
  const roots = [layout.workspace, ...(layout.writable ?? []), ...layout.readOnly, ...(layout.guarded ?? [])];
  const [within, outside] = partition(existingHiddenPaths(layout.concealed ?? []), ({ path }) => roots.some((root) => below(root, path)));
  for (const path of outside) args.push(...conceal(path, roots.some((root) => below(path.path, root))));
  args.push(layout.mode === "workspace-write" ? "--bind" : "--ro-bind", layout.workspace, layout.workspace);
  for (const path of layout.writable ?? []) args.push("--bind", path, path);
  for (const path of layout.readOnly) args.push("--ro-bind", path, path);
  for (const path of layout.guarded ?? []) args.push("--ro-bind-try", path, path);
  for (const path of within) args.push(...conceal(path, false));
  args.push("--seccomp", seccompFd, "--chdir", cwd);
  return args;
}

/**
 * /dev/null over a file; over a directory an empty tmpfs, read-only unless a
 * bind still has to make its mount point in it. (No `--perms`: bwrap before
 * 0.5, still in LTS distributions, lacks it, and empty is enough.)
 */
function conceal({ path, directory }: HiddenPath, holdsBind: boolean): string[] {
  if (!directory) return ["--ro-bind", "/dev/null", path];
  return holdsBind ? ["--tmpfs", path] : ["--tmpfs", path, "--remount-ro", path];
}

function below(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

function partition<T>(list: readonly T[], test: (item: T) => boolean): [T[], T[]] {
  return [list.filter(test), list.filter((item) => !test(item))];
}

function filterFor(layout: SandboxLayout): Uint8Array | undefined {
  return seccompFilter(process.arch, { unixSockets: layout.unixSockets.length > 0 });
}

/**
 * The probe: bwrap (found on PATH) starting `true` in the layout, with the
 * seccomp program on its stdin (`true` reads nothing), so no `sh` is started in
 * front of it to hand the program over as for a command: one process less on
 * the way to a run's first model request. Or why there is no probe to run.
 */
function probeCommand(layout: SandboxLayout): { cmd: string[]; filter: Uint8Array } | string {
  const bwrap = Bun.which("bwrap");
  if (bwrap === null) return "bubblewrap (bwrap) is not installed";
  const filter = filterFor(layout);
  if (filter === undefined) return `no seccomp filter for ${process.arch}`;
  return { cmd: [bwrap, ...bwrapOptions(layout, layout.workspace, "0"), "--", "true"], filter };
}

/** Why bwrap cannot run this layout here (missing, no filter, or namespaces refused), or undefined when it can. */
export function probeBubblewrap(layout: SandboxLayout): string | undefined {
  const probe = probeCommand(layout);
  if (typeof probe === "string") return probe;
  try {
    const result = Bun.spawnSync(probe.cmd, { stdin: probe.filter, stdout: "ignore", stderr: "pipe" });
    return probeOutcome(result.exitCode, result.stderr.toString());
  } catch (error) {
    return `bwrap could not be started (${(error as Error).message})`;
  }
}

/** probeBubblewrap without blocking: the sandbox's check runs while the run sets up its session. */
export async function probeBubblewrapInBackground(layout: SandboxLayout): Promise<string | undefined> {
  const probe = probeCommand(layout);
  if (typeof probe === "string") return probe;
  try {
    const child = Bun.spawn(probe.cmd, { stdin: probe.filter, stdout: "ignore", stderr: "pipe" });
    const [stderr, exitCode] = await Promise.all([new Response(child.stderr).text(), child.exited]);
    return probeOutcome(exitCode, stderr);
  } catch (error) {
    return `bwrap could not be started (${(error as Error).message})`;
  }
}

function probeOutcome(exitCode: number | null, stderr: string): string | undefined {
  if (exitCode === 0) return undefined;
  const reason = stderr.trim().split("\n")[0] ?? "";
  return `bwrap cannot create a sandbox here (${reason || `exit code ${exitCode}`}); user namespaces may be disabled`;
}
