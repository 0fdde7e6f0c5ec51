import { existsSync, lstatSync, mkdirSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { SandboxUnavailableError, UsageError } from "../../core/errors.ts";
import { bubblewrapArgs, probeBubblewrap, probeBubblewrapInBackground } from "./bubblewrap.ts";
import { seatbeltArgs, probeSeatbelt } from "./seatbelt.ts";

import { SANDBOX_MODES } from "./modes.ts";

export { SANDBOX_MODES };
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/** What `shell` runs under: the mode asked for, and how (or "unavailable": it could not be had, so commands are refused). */
export type SandboxStatus = "bubblewrap" | "sandbox-exec" | "unavailable" | "off";

/** Where the sandbox lets a command write, and what stays read-only inside that. */
export interface SandboxLayout {
  mode: Exclude<SandboxMode, "danger-full-access">;
  workspace: string;
  /** Writable besides the workspace (the runtime's git: the repository's git data outside a worktree). */
  writable?: string[];
  /** Read-only even in workspace-write: the workspace's `.agent/` and `.git`, and the state root. */
  readOnly: string[];
  /**
   * Read-only too, where they still are when a command starts: `.mcp.json`,
   * `skills/`, where config links to, what hooks and MCP servers run (one the
   * user deletes mid-run must not stop every command).
   */
  guarded?: string[];
  network: boolean;
  /** Directories of host sockets, each replaced by an empty tmpfs: /run, the runtime dir, the store's socket dir. */
  hidden: string[];
  /** Files under a hidden directory that commands still need (/etc/resolv.conf's target), bound back read-only. */
  revealed: string[];
  /** Unix sockets the user's config allows (existing ones), bound back read-only; while any is, the filter lets unix sockets be made. */
  unixSockets: string[];
  /**
   * What says who the user is (session key, trust store, state, credentials
   * files): unreadable inside. Checked on disk for each command
   * (hidden-paths.ts), so a state root the run makes later is hidden too.
   */
  concealed?: readonly string[];
}

/** Where a command the runtime itself starts (its git) may write: the first path is its workspace. */
export interface SandboxBinds {
  writable: [string, ...string[]];
  /** Read-only inside the writable ones (the repository's config and hooks); those that do not exist are skipped. */
  readOnly: string[];
}

/**
 * Runs every process that can run what the model wrote — shell commands (the
 * Lead's, teammates', subagents', background jobs'), hooks, the runtime's own
 * git — inside an OS sandbox: the root file system read-only, the workspace
 * writable in `workspace-write` except `.agent/` and `.git`, a private /tmp, no
 * network unless configured. This is the boundary; permission rules on shell
 * are defence in depth (docs/security.md, "The execution boundary").
 */
export interface Sandbox {
  readonly mode: SandboxMode;
  readonly status: SandboxStatus;
  /**
   * The argv that runs `sh -c script` in `cwd` under the sandbox (plain `sh -c`
   * in danger-full-access). Throws SandboxUnavailableError, one line naming the
   * cause and the fix, when the sandbox asked for cannot start: nothing falls
   * back to running unsandboxed.
   */
  command(script: string, cwd: string): string[];
  /**
   * The same sandbox around another workspace (a worktree teammate's): that one
   * writable in workspace-write, its `.agent/` read-only; the repository's git
   * data outside it stays read-only, so the runtime commits for the teammate.
   */
  within(workspace: string): Sandbox;
  /**
   * `argv` as is (no shell) under the same engine, writable only where `binds`
   * says, without network: how the runtime's own git runs (src/worktrees/git.ts).
   * Unsandboxed, `argv` unchanged.
   */
  wrap(argv: string[], cwd: string, binds: SandboxBinds): string[];
}

export interface SandboxRequest {
  /** The mode the flag or config asked for; absent means the default (workspace-write where it works). */
  mode?: SandboxMode;
  /** True when the user named the mode (a flag or config): then a sandbox that cannot be had is an error. */
  explicit: boolean;
  network: boolean;
  /** Unix socket paths commands may connect to (config `sandbox.unixSockets`, user level only). */
  unixSockets?: string[];
  /** More directories of host sockets to hide besides /run and /var/run: $XDG_RUNTIME_DIR, the store's socket dir. */
  hostSocketDirs?: string[];
  /** The commands' PATH: a directory of it under a hidden one (NixOS's /run/current-system/sw/bin) is bound back. */
  searchPath?: string;
  workspace: string;
  /** `--add-dir` directories: writable like the workspace in workspace-write, their `.git` and `.agent/` read-only. */
  addDirs?: readonly string[];
  /** The workspace's `.agent/` directory. */
  agentDir: string;
  stateRoot: string;
  /** More paths read-only in workspace-write: `.mcp.json`, `skills/`, where config links to, what hooks and MCP servers run. */
  guarded?: readonly string[];
  /** Absolute paths commands must not read (hiddenPaths(): the session key, the state, credentials files, `sandbox.hiddenPaths`). */
  concealed?: readonly string[];
  platform?: NodeJS.Platform;
}

export interface ResolvedSandbox {
  sandbox: Sandbox;
  /** Said once on stderr when the default sandbox could not be had (and so commands are refused). */
  warning?: string;
}

export const SANDBOX_INSTALL_HINT =
  "install bubblewrap (Debian/Ubuntu: apt-get install -y bubblewrap; Fedora: dnf install bubblewrap) and make sure user namespaces are allowed, " +
  "or run with --sandbox danger-full-access";

const UNSANDBOXED: Sandbox = {
  mode: "danger-full-access",
  status: "off",
  command: (script) => ["sh", "-c", script],
  within: () => UNSANDBOXED,
  wrap: (argv) => argv,
};

/** The line every refused command gets when the sandbox cannot start. */
export function sandboxRefusal(mode: SandboxMode, problem: string): string {
  return `refused: commands run only inside the ${mode} sandbox, which cannot start here (${problem}); ${SANDBOX_INSTALL_HINT} to run them unsandboxed`;
}

/** The default sandbox that could not be had: the run goes on, every command it would wrap is refused. */
function refusing(mode: SandboxMode, problem: string): Sandbox {
  const sandbox: Sandbox = {
    mode,
    status: "unavailable",
    command: () => {
      throw new SandboxUnavailableError(sandboxRefusal(mode, problem));
    },
    within: () => sandbox,
    wrap: () => {
      throw new SandboxUnavailableError(sandboxRefusal(mode, problem));
    },
  };
  return sandbox;
}

/**
 * The sandbox for this run, probed once: the mode asked for (default
 * workspace-write) where the platform can enforce it. When it cannot, it fails
 * closed: for the default, the run goes on with a warning and every command the
 * sandbox would wrap is refused with one line saying why and how to fix it; for
 * an explicit mode, a UsageError (exit 2) with the install hint.
 */
export function resolveSandbox(request: SandboxRequest): ResolvedSandbox {
  const mode = request.mode ?? "workspace-write";
  if (mode === "danger-full-access") return { sandbox: UNSANDBOXED };
  const platform = request.platform ?? process.platform;
  const layout = layoutOf(mode, request);
  const engine = platform === "linux" ? linuxEngine(layout) : platform === "darwin" ? macEngine(layout) : { problem: `no sandbox for ${platform}` };
  if ("wrap" in engine) return { sandbox: sandboxOf(mode, engine, request) };
  if (request.explicit) {
    throw new UsageError(`--sandbox ${mode} cannot be enforced here (${engine.problem}); ${SANDBOX_INSTALL_HINT}`);
  }
  return {
    sandbox: refusing(mode, engine.problem),
    warning: `shell commands will be refused: the ${mode} sandbox cannot start here (${engine.problem}); ${SANDBOX_INSTALL_HINT}`,
  };
}

/** A sandbox whose probe may still run: `warning` settles with its verdict (resolveSandboxInBackground). */
export interface ProbingSandbox {
  sandbox: Sandbox;
  warning: Promise<string | undefined>;
}

/**
 * resolveSandbox for a run, with the default sandbox's probe (a bwrap started to
 * run `true`, 8–23 ms quiet) left running while the run creates its session and
 * builds its runtime; `warning` settles once the verdict is known. The sandbox
 * never acts on an unknown verdict: asked anything (its status, a command, a
 * wrap — a hook, an MCP server, a job or the runtime's git) before the
 * background probe is done, it probes synchronously then, as resolveSandbox
 * does. An explicit mode, or another platform, is resolved at once as before
 * (its error is exit 2 before anything runs).
 */
export function resolveSandboxInBackground(request: SandboxRequest): ProbingSandbox {
  const mode = request.mode ?? "workspace-write";
  const platform = request.platform ?? process.platform;
  if (request.explicit || mode === "danger-full-access" || platform !== "linux") {
    const resolved = resolveSandbox(request);
    return { sandbox: resolved.sandbox, warning: Promise.resolve(resolved.warning) };
  }
  const layout = layoutOf(mode, request);
  let verdict: ResolvedSandbox | undefined;
  // The first verdict stands: a synchronous probe forced by an early use wins over the background one.
  const settle = (problem: string | undefined): ResolvedSandbox =>
    (verdict ??=
      problem === undefined
        ? { sandbox: sandboxOf(mode, { status: "bubblewrap", wrap: (script, cwd) => bubblewrapArgs(layout, cwd, ["sh", "-c", script]) }, request) }
        : {
            sandbox: refusing(mode, problem),
            warning: `shell commands will be refused: the ${mode} sandbox cannot start here (${problem}); ${SANDBOX_INSTALL_HINT}`,
          });
  const warning = probeBubblewrapInBackground(layout).then((problem) => settle(problem).warning);
  return { sandbox: following(() => (verdict ?? settle(probeBubblewrap(layout))).sandbox), warning };
}

/** A sandbox that is whatever `current()` is when asked (another workspace's too). */
function following(current: () => Sandbox): Sandbox {
  return {
    get mode() {
      return current().mode;
    },
    get status() {
      return current().status;
    },
    command: (script, cwd) => current().command(script, cwd),
    within: (workspace) => {
      let of: Sandbox | undefined;
      let inner: Sandbox | undefined;
      return following(() => {
        const now = current();
        if (of !== now) [of, inner] = [now, now.within(workspace)];
        return inner!;
      });
    },
    wrap: (argv, cwd, binds) => current().wrap(argv, cwd, binds),
  };
}

/** A sandbox whose engine was probed: another workspace's layout is wrapped the same way without probing again. */
function sandboxOf(mode: Exclude<SandboxMode, "danger-full-access">, engine: Extract<Engine, { wrap: unknown }>, request: SandboxRequest): Sandbox {
  const argsOf = engine.status === "bubblewrap" ? bubblewrapArgs : seatbeltArgs;
  return {
    mode,
    status: engine.status,
    command: (script, cwd) => engine.wrap(script, cwd),
    within: (workspace) => {
      const moved = { ...request, workspace, agentDir: join(workspace, ".agent") };
      const layout = layoutOf(mode, moved);
      return sandboxOf(mode, { status: engine.status, wrap: (script, cwd) => argsOf(layout, cwd, ["sh", "-c", script]) }, moved);
    },
    wrap: (argv, cwd, binds) => {
      const [workspace, ...writable] = binds.writable;
      // The host's sockets stay hidden and refused as for a command; none is let in.
      const { hidden, revealed, concealed } = sandboxLayout(mode, request, { create: false });
      const readOnly = binds.readOnly.filter((path) => existsSync(path));
      const layout: SandboxLayout = { mode: "workspace-write", workspace, writable, readOnly, network: false, hidden, revealed, unixSockets: [], ...(concealed ? { concealed } : {}) };
      return argsOf(layout, cwd, argv);
    },
  };
}

function layoutOf(mode: Exclude<SandboxMode, "danger-full-access">, request: SandboxRequest): SandboxLayout {
  return sandboxLayout(mode, request, { create: true });
}

/**
 * The layout commands run in. With `create`, the read-only directories are made
 * first in workspace-write (a run); without, nothing is (`agent doctor`).
 */
export function sandboxLayout(mode: Exclude<SandboxMode, "danger-full-access">, request: SandboxRequest, options: { create: boolean }): SandboxLayout {
  const readOnly = [request.agentDir, request.stateRoot].filter((path) => inside(request.workspace, path));
  if (mode === "workspace-write" && options.create) {
    // `.agent/` is mounted read-only over the writable workspace: it must exist
    // first, or a command could create it (and a config.json in it).
    for (const path of readOnly) {
      try {
        mkdirSync(path, { recursive: true });
      } catch {
        // A workspace we cannot write: the sandboxed command cannot create it either.
      }
    }
  }
  // `.git` (a directory, or a worktree's pointer file) read-only: its config and
  // hooks are what the user's own git runs, outside any sandbox. The whole of
  // it, not config and hooks alone: git also follows files that are not there
  // yet (`commondir`, `config.worktree`), and a missing path cannot be bound.
  readOnly.push(join(request.workspace, ".git"));
  const added = request.addDirs ?? [];
  // The same rule in an added directory: its git data and agent config are not the commands' to change.
  for (const dir of added) readOnly.push(join(dir, ".git"), join(dir, ".agent"));

  const hidden = socketDirs(request.hostSocketDirs ?? []);
  return {
    mode,
    workspace: request.workspace,
    ...(mode === "workspace-write" && added.length > 0 ? { writable: [...added] } : {}),
    readOnly: readOnly.filter((path) => existsSync(path)),
    ...guardedOf(request, readOnly),
    network: request.network,
    hidden,
    revealed: revealedPaths(hidden, request.searchPath ?? ""),
    unixSockets: (request.unixSockets ?? []).filter((path) => isAbsolute(path) && existsSync(path)),
    ...(request.concealed && request.concealed.length > 0 ? { concealed: request.concealed } : {}),
  };
}

/** The request's guarded paths that exist now and are not read-only already. */
function guardedOf(request: SandboxRequest, readOnly: readonly string[]): { guarded?: string[] } {
  const guarded = (request.guarded ?? []).filter((path) => !readOnly.includes(path) && existsSync(path));
  return guarded.length > 0 ? { guarded } : {};
}

/**
 * /run, /var/run and `extra` as real, existing directories, without repeats and
 * without one inside another (or inside /tmp, already a private tmpfs): a tmpfs
 * over each leaves no host socket in them.
 */
export function socketDirs(extra: string[]): string[] {
  const dirs: string[] = [];
  for (const path of ["/run", "/var/run", ...extra]) {
    let real: string;
    try {
      real = realpathSync(path);
      if (!lstatSync(real).isDirectory()) continue;
    } catch {
      continue;
    }
    if (real === "/" || [...dirs, "/tmp"].some((dir) => real === dir || inside(dir, real))) continue;
    for (let i = dirs.length - 1; i >= 0; i -= 1) if (inside(real, dirs[i]!)) dirs.splice(i, 1);
    dirs.push(real);
  }
  return dirs;
}

/**
 * What commands need from under a hidden directory, bound back read-only:
 * /etc/resolv.conf's target when it is a link into /run (systemd-resolved; DNS
 * would break with the network on), and directories of PATH there.
 */
function revealedPaths(hidden: string[], searchPath: string): string[] {
  const under = (path: string) => hidden.some((dir) => inside(dir, path));
  const revealed: string[] = [];
  try {
    const target = realpathSync("/etc/resolv.conf");
    if (under(target)) revealed.push(target);
  } catch {
    // No resolv.conf: nothing to keep.
  }
  for (const dir of searchPath.split(":")) if (isAbsolute(dir) && under(dir) && existsSync(dir) && !revealed.includes(dir)) revealed.push(dir);
  return revealed;
}

type Engine = { status: SandboxStatus; wrap(script: string, cwd: string): string[] } | { problem: string };

function linuxEngine(layout: SandboxLayout): Engine {
  const problem = probeBubblewrap(layout);
  if (problem !== undefined) return { problem };
  return { status: "bubblewrap", wrap: (script, cwd) => bubblewrapArgs(layout, cwd, ["sh", "-c", script]) };
}

function macEngine(layout: SandboxLayout): Engine {
  const problem = probeSeatbelt();
  if (problem !== undefined) return { problem };
  return { status: "sandbox-exec", wrap: (script, cwd) => seatbeltArgs(layout, cwd, ["sh", "-c", script]) };
}

function inside(parent: string, path: string): boolean {
  const rel = relative(parent, resolve(parent, path));
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

/** Parses a `--sandbox` value; throws UsageError naming the choices. */
export function parseSandboxMode(value: string, source: string): SandboxMode {
  if ((SANDBOX_MODES as readonly string[]).includes(value)) return value as SandboxMode;
  throw new UsageError(`invalid ${source} ${JSON.stringify(value)}: expected one of ${SANDBOX_MODES.join(", ")}`);
}
