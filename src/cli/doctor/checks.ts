import { closeSync, existsSync, openSync, readdirSync, statSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { readConfigFile } from "../../config/config-file.ts";
import { CONFIG_LEVELS, configLocations } from "../../config/locations.ts";
import type { Settings, SettingsFlags } from "../../config/load.ts";
import { loadWorkspaceSettings, trustCommandLine } from "../../trust/project-trust.ts";
import { MissingApiKeyError } from "../../core/errors.ts";
import type { AgentName } from "../../core/agent-name.ts";
import { MailboxPaths, REASON_SUFFIX } from "../../mailbox/paths.ts";
import { McpManager } from "../../mcp/manager.ts";
import { listModels } from "../../model/list-models.ts";
import { defaultBaseUrl, modelsUrl } from "../../model/providers/endpoints.ts";
import { KEY_VARIABLES } from "../../model/providers/provider.ts";
import { probeBubblewrap } from "../../security/sandbox/bubblewrap.ts";
import { SANDBOX_INSTALL_HINT, type Sandbox, resolveSandbox, sandboxLayout } from "../../security/sandbox/sandbox.ts";
import { agentDirOf } from "../../security/protected-paths.ts";
import { probeSeatbelt } from "../../security/sandbox/seatbelt.ts";
import { SessionStore } from "../../sessions/session-store.ts";
import { readRuntimeOwner } from "../../storage/runtime-lock.ts";
import { FileTeamRegistry, type TeammateRecord } from "../../team/team-registry.ts";
import { DEFAULT_SHELL_OUTPUT_CHARS } from "../../tools/shell.ts";
import { VERSION } from "../version.ts";
import { sandboxRequest } from "../run/sandbox-request.ts";

// The checks of `agent doctor`, each one question answered in one line. A
// `fail` is something `agent run` needs and does not have; a `warn` is worth
// knowing but does not stop a run.

export type CheckStatus = "ok" | "warn" | "fail" | "skip";

export interface Check {
  /** Stable, for --json: `state_dir`, `api_key`, … */
  id: string;
  status: CheckStatus;
  detail: string;
}

export const ok = (id: string, detail: string): Check => ({ id, status: "ok", detail });
export const warn = (id: string, detail: string): Check => ({ id, status: "warn", detail });
export const fail = (id: string, detail: string): Check => ({ id, status: "fail", detail });
export const skip = (id: string, detail: string): Check => ({ id, status: "skip", detail });

function errno(error: unknown): string {
  return (error as { code?: string }).code ?? (error as Error).message;
}

export function checkWorkspace(workspace: string): Check {
  const git = existsSync(join(workspace, ".git")) ? "a git repository" : "not a git repository";
  return ok("workspace", `${workspace} (${git})`);
}

/**
 * Writable as this process would write it: a file is created and removed, since
 * modes alone do not tell (root, read-only mounts, ACLs). A state dir that does
 * not exist yet is fine when the first existing directory above it is writable.
 */
export function checkStateDir(stateDir: string): Check {
  let probeDir = stateDir;
  while (!existsSync(probeDir)) {
    const parent = dirname(probeDir);
    if (parent === probeDir) break;
    probeDir = parent;
  }
  if (existsSync(probeDir) && !statSync(probeDir).isDirectory()) {
    return fail("state_dir", `${probeDir} is not a directory; remove it or choose another state dir with --state-dir`);
  }
  const probe = join(probeDir, `.agent-doctor-${process.pid}-${Math.random().toString(36).slice(2)}`);
  try {
    closeSync(openSync(probe, "wx", 0o600));
    unlinkSync(probe);
  } catch (error) {
    return fail("state_dir", `cannot write to ${probeDir} (${errno(error)}); make it writable or choose another state dir with --state-dir`);
  }
  return ok("state_dir", probeDir === stateDir ? `${stateDir} (writable)` : `${stateDir} (created on first use; ${probeDir} is writable)`);
}

export interface SettingsResult {
  checks: Check[];
  /** Null when they could not be read: the checks that need them are skipped. */
  settings: Settings | null;
}

/**
 * Each level's configuration file (found, valid), then the settings all levels,
 * the environment and the flags make, and whether the project's own settings
 * apply: without the user's trust nothing the project names is started or contacted.
 */
export function checkConfig(workspace: string, flags: SettingsFlags, trustProject = false): SettingsResult {
  const checks: Check[] = [];
  const locations = configLocations(workspace);
  let valid = true;
  for (const level of CONFIG_LEVELS) {
    try {
      const file = readConfigFile(locations[level], level);
      checks.push(ok(`config_${level}`, file ? `${file.path} (valid)` : `${locations[level]} (none)`));
    } catch (error) {
      checks.push(fail(`config_${level}`, (error as Error).message));
      valid = false;
    }
  }
  if (!valid) return { checks, settings: null };
  try {
    const { settings, warnings, trust, ignoredItems } = loadWorkspaceSettings({ workspace, flags, trustProject });
    for (const warning of warnings) checks.push(warn("config", warning));
    checks.push(trustCheck(trust, ignoredItems.length, workspace));
    return { checks, settings };
  } catch (error) {
    checks.push(fail("settings", (error as Error).message));
    return { checks, settings: null };
  }
}

function trustCheck(trust: ReturnType<typeof loadWorkspaceSettings>["trust"], ignored: number, workspace: string): Check {
  const enables = trust.fingerprint.items.length;
  if (enables === 0) return ok("trust", "the project's files set nothing that needs trust");
  if (trust.trusted) {
    const by = trust.by === "flag" ? "--trust-project" : trust.by === "env" ? "AGENT_TRUST_PROJECT=1" : `recorded ${trust.recorded?.at ?? ""}`.trim();
    return ok("trust", `trusted (${by}): the project's ${enables} setting${enables === 1 ? "" : "s"} apply`);
  }
  return warn("trust", `untrusted: ${ignored} setting${ignored === 1 ? "" : "s"} ignored; \`${trustCommandLine(workspace, process.cwd())}\` shows and trusts them`);
}

/** Key present; with the network, the endpoint answers, takes the key and offers the model. */
export async function checkEndpoint(settings: Settings, offline: boolean, timeoutMs: number): Promise<Check[]> {
  const endpoint = settings.baseUrl ?? defaultBaseUrl(settings.provider);
  const keyVariable = KEY_VARIABLES[settings.provider];
  const keyCheck = settings.apiKey
    ? ok("api_key", "present")
    : // The same words `agent run` would fail with.
      fail("api_key", new MissingApiKeyError(keyVariable).message);
  if (offline) return [keyCheck, skip("endpoint", `${endpoint}: not contacted (--offline)`)];

  const listed = await listModels({ baseUrl: settings.baseUrl, apiKey: settings.apiKey, timeoutMs, provider: settings.provider, apiVersion: settings.apiVersion });
  if (listed.kind === "unreachable") {
    return [keyCheck, fail("endpoint", `cannot reach ${endpoint} (${listed.detail}); check --base-url / OPENAI_BASE_URL and the network`)];
  }
  if (listed.kind === "not_api") {
    return [keyCheck, fail("endpoint", `${listed.detail}; --base-url must be the API root, usually ending in /v1`)];
  }
  if (listed.kind === "http") {
    const said = `HTTP ${listed.status}: ${listed.detail}`;
    if (listed.status === 401 || listed.status === 403) {
      // The endpoint is there; it is the key that is missing or refused.
      const key = settings.apiKey ? fail("api_key", `rejected by ${endpoint} (${said}); check ${keyVariable}`) : keyCheck;
      return [key, ok("endpoint", `${endpoint} answers`)];
    }
    if (listed.status === 404) {
      return [keyCheck, fail("endpoint", `${modelsUrl(settings.provider, settings.baseUrl, settings.apiVersion)} not found (${said}); --base-url must be the API root, usually ending in /v1`)];
    }
    return [keyCheck, fail("endpoint", `${endpoint} answered ${said}`)];
  }
  const key = settings.apiKey ? ok("api_key", `accepted by ${endpoint}`) : keyCheck;
  const offered = listed.models.includes(settings.model);
  const model = offered
    ? ok("model", `${settings.model} is offered by ${endpoint}`)
    : warn("model", `${settings.model} is not among the ${listed.models.length} models ${endpoint} lists (${preview(listed.models)}); check --model / AGENT_MODEL`);
  return [key, ok("endpoint", `${endpoint} answers (${listed.models.length} models)`), model];
}

function preview(names: string[]): string {
  return names.length <= 5 ? names.join(", ") : `${names.slice(0, 5).join(", ")}, …`;
}

/** A program on PATH that answers `args`: its first line of output, or null. */
function probe(cmd: string[]): { ok: boolean; output: string } | null {
  if (Bun.which(cmd[0]!) === null) return null;
  const result = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
  const output = `${result.stdout}${result.stderr}`.trim().split("\n")[0] ?? "";
  return { ok: result.exitCode === 0, output };
}

export function checkGit(): Check {
  const git = probe(["git", "--version"]);
  return git?.ok ? ok("git", git.output) : warn("git", "git is not installed: the agent cannot use it in shell commands");
}

/**
 * The OS sandbox `shell` would run in, probed as a run probes it but creating
 * nothing. Without one it fails: a mode the user asked for stops the run (exit
 * 2); the default lets the run start but refuses every command (fail closed).
 */
export function checkSandbox(settings: Settings, workspace: string, stateDir: string): Check {
  const { mode = "workspace-write", explicit, network } = settings.sandbox;
  if (mode === "danger-full-access") return ok("sandbox", "off (danger-full-access): shell commands run unsandboxed");
  const layout = sandboxLayout(mode, sandboxRequest(settings, workspace, stateDir, process.env), { create: false });
  const problem =
    process.platform === "linux" ? probeBubblewrap(layout) : process.platform === "darwin" ? probeSeatbelt() : `no sandbox for ${process.platform}`;
  if (problem === undefined) {
    return ok("sandbox", `${mode} with ${process.platform === "linux" ? "bubblewrap" : "sandbox-exec"}${network ? ", network allowed" : ", no network"}`);
  }
  if (explicit) return fail("sandbox", `${mode} was asked for but cannot be enforced here (${problem}); ${SANDBOX_INSTALL_HINT}`);
  return fail("sandbox", `shell commands would be refused: the ${mode} sandbox cannot start here (${problem}); ${SANDBOX_INSTALL_HINT}`);
}

/** Where a session's team and mailbox counts are read from: its files (default) or the PostgreSQL store. */
export interface LeftoverSource {
  teammates(session: { dir: string; id: string }): Promise<TeammateRecord[]>;
  mailboxCounts(session: { dir: string; id: string }): Promise<MailboxCount[]>;
}

export interface MailboxCount {
  agent: string;
  /** Messages still to be worked on: ready and processing. */
  open: number;
  quarantined: number;
}

/** The session's files, read without taking a lock or creating anything. */
export const fileLeftovers: LeftoverSource = {
  teammates: ({ dir }) => new FileTeamRegistry(dir).read(),
  mailboxCounts: async ({ dir }) => mailboxCounts(dir),
};

/** What stopped runs left in each session, and which sessions a runtime owns now. */
export async function checkPendingWork(stateRoot: string, source: LeftoverSource = fileLeftovers): Promise<Check[]> {
  if (!existsSync(stateRoot)) return [ok("pending", "nothing pending (no state yet)")];
  const checks: Check[] = [];
  const parts: string[] = [];
  try {
    const sessions = new SessionStore(stateRoot);
    // Only this user's sessions have work to report: a foreign one is named, never read.
    const all = sessions.list();
    for (const { id } of all.filter((meta) => sessions.owns(meta))) {
      const left = await sessionLeftovers({ dir: sessions.dirOf(id), id }, source, checks);
      if (left.length > 0) parts.push(`session ${id}: ${left.join("; ")}`);
    }
    const foreign = all.filter((meta) => !sessions.owns(meta)).map((meta) => meta.id);
    if (foreign.length > 0) {
      checks.push(warn("foreign", `${foreign.length} foreign session(s) not created by you here, ignored (${foreign.join(", ")}); \`agent sessions adopt ID\` takes one over`));
    }
    if (parts.length === 0) checks.unshift(ok("pending", "nothing pending"));
    else checks.unshift(warn("pending", `work left by an earlier run (${parts.join("; ")}); \`agent drain\` finishes it`));
  } catch (error) {
    checks.push(fail("state", `${(error as Error).message}`));
  }
  return checks;
}

/** One session's work left for `agent drain`; a runtime owning it and quarantined entries go to `checks`. */
async function sessionLeftovers(session: { dir: string; id: string }, source: LeftoverSource, checks: Check[]): Promise<string[]> {
  const { id } = session;
  const owner = await readRuntimeOwner(session.dir);
  if (owner) {
    checks.push(warn("runtime", `a runtime owns session ${id} now (pid ${owner.pid} on ${owner.host}): \`agent run -c\` waits for it only with --wait-lock`));
  }
  const teammates = await source.teammates(session);
  const waiting: string[] = [];
  for (const { agent, open, quarantined } of await source.mailboxCounts(session)) {
    if (open > 0) waiting.push(`${agent}: ${open} message${open === 1 ? "" : "s"}`);
    if (quarantined > 0) {
      checks.push(
        warn("quarantine", `${quarantined} quarantined entr${quarantined === 1 ? "y" : "ies"} in ${agent}'s mailbox of session ${id}; see \`agent mailbox list --session ${id} --state quarantine\``),
      );
    }
  }
  const interrupted = owner ? [] : teammates.filter((t) => t.state === "running").map((t) => t.name);
  return [...waiting, ...(interrupted.length > 0 ? [`interrupted: ${interrupted.join(", ")}`] : [])];
}

/**
 * Messages still to be worked on (ready, processing) and quarantined entries per
 * mailbox, counted from the directories without the mailbox lock: a doctor must
 * not create lock files in the state dir it inspects.
 */
function mailboxCounts(stateDir: string): MailboxCount[] {
  const paths = new MailboxPaths(stateDir);
  if (!existsSync(paths.root)) return [];
  const count = (dir: string, keep: (name: string) => boolean) => (existsSync(dir) ? readdirSync(dir).filter(keep).length : 0);
  return readdirSync(paths.root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
    .map(({ name }) => {
      const agent = name as AgentName;
      const json = (file: string) => file.endsWith(".json");
      return {
        agent,
        open: count(paths.stateDirOf(agent, "ready"), json) + count(paths.stateDirOf(agent, "processing"), json),
        quarantined: count(paths.stateDirOf(agent, "quarantine"), (file) => !file.endsWith(REASON_SUFFIX)),
      };
    });
}

/**
 * Each configured MCP server started (as `agent mcp list` does) and stopped again.
 * A server that does not start is a warning, as it is in a run: the run goes on
 * without its tools.
 */
export async function checkMcp(settings: Settings, workspace: string, offline: boolean): Promise<Check[]> {
  const names = Object.keys(settings.mcp.servers ?? {});
  if (names.length === 0) return [skip("mcp", "no MCP servers configured")];
  if (offline) return [skip("mcp", `${names.join(", ")}: not started (--offline)`)];
  // The workspace's own servers start in the sandbox, as in a run (its `.agent/` exists: their config is there).
  let sandbox: Sandbox | undefined;
  if ((settings.mcp.sandboxed ?? []).length > 0) {
    try {
      sandbox = resolveSandbox(sandboxRequest(settings, workspace, agentDirOf(workspace), process.env)).sandbox;
    } catch (error) {
      return [fail("mcp", `${settings.mcp.sandboxed!.join(", ")}: not started: ${(error as Error).message}`)];
    }
  }
  const manager = new McpManager({
    ...settings.mcp,
    workspace,
    client: { name: "agent", version: VERSION },
    maxOutputChars: DEFAULT_SHELL_OUTPUT_CHARS,
    commandEnv: settings.shell.env,
    ...(sandbox ? { sandbox } : {}),
  });
  try {
    await manager.start();
    return manager.statuses().map((server) =>
      server.status === "connected"
        ? ok(`mcp_${server.name}`, `${server.name}: starts, ${server.tools.length} tool${server.tools.length === 1 ? "" : "s"}`)
        : warn(`mcp_${server.name}`, `${server.name}: ${server.status}${server.error ? `: ${server.error}` : ""}; a run goes on without its tools (docs/mcp.md)`),
    );
  } finally {
    await manager.close();
  }
}
