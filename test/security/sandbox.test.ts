import { expect, test } from "bun:test";
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { SandboxUnavailableError, UsageError } from "../../src/core/errors.ts";
import { bubblewrapArgs } from "../../src/security/sandbox/bubblewrap.ts";
import { resolveSandbox } from "../../src/security/sandbox/sandbox.ts";
import { printfEscaped, seccompFilter } from "../../src/security/sandbox/seccomp.ts";
import { seatbeltProfile } from "../../src/security/sandbox/seatbelt.ts";
import { tempDir } from "../support/temp-dir.ts";

const layout = { mode: "workspace-write" as const, workspace: "/w", readOnly: ["/w/.agent"], network: false, hidden: ["/run"], revealed: ["/run/systemd/resolve/stub-resolv.conf"], unixSockets: [] };

test("bwrap: root read-only, private /tmp and host socket dirs before the workspace bind, .agent/ read-only over it, network unshared, the seccomp filter on fd 3", () => {
  const args = bubblewrapArgs(layout, "/w", ["sh", "-c", "x"]);
  expect(args.slice(0, 2)).toEqual(["sh", "-c"]);
  expect(args[3]).toBe(printfEscaped(seccompFilter()!));
  expect(args.slice(4).join(" ")).toBe(
    "bwrap --die-with-parent --unshare-all --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --tmpfs /run " +
      "--ro-bind /run/systemd/resolve/stub-resolv.conf /run/systemd/resolve/stub-resolv.conf " +
      "--bind /w /w --ro-bind /w/.agent /w/.agent --seccomp 3 --chdir /w -- sh -c x",
  );
  expect(bubblewrapArgs({ ...layout, network: true }, "/w", ["true"])).toContain("--share-net");
  expect(bubblewrapArgs({ ...layout, mode: "read-only" }, "/w", ["true"]).join(" ")).toContain("--ro-bind /w /w");
  // An allowed socket is bound back, and the filter then lets unix sockets be made.
  const allowed = bubblewrapArgs({ ...layout, unixSockets: ["/run/docker.sock"] }, "/w", ["true"]);
  expect(allowed.join(" ")).toContain("--tmpfs /run --ro-bind /run/systemd/resolve/stub-resolv.conf /run/systemd/resolve/stub-resolv.conf --ro-bind /run/docker.sock /run/docker.sock --bind /w /w");
  expect(allowed[3]).toBe(printfEscaped(seccompFilter(process.arch, { unixSockets: true })!));
});

test("the macOS profile (not run here): writes only in the workspace and temp dirs, .agent/ denied after, network denied", () => {
  const profile = seatbeltProfile(layout);
  const lines = profile.trim().split("\n");
  expect(lines.slice(0, 3)).toEqual(["(version 1)", "(allow default)", "(deny file-write*)"]);
  expect(profile).toContain('(subpath "/w")');
  // Later rules win in SBPL: the .agent/ denial must come after the workspace allowance.
  expect(lines.findIndex((line) => line.includes('(deny file-write* (subpath "/w/.agent"))'))).toBeGreaterThan(
    lines.findIndex((line) => line.includes('(subpath "/w")')),
  );
  expect(profile).toContain("(deny network-outbound)");
  // No unix socket of the host's, but those the user's config lists (and the resolver's with the network on).
  expect(profile).toContain("(deny network-outbound (remote unix-socket))");
  expect(profile).not.toContain("mDNSResponder");
  const allowed = seatbeltProfile({ ...layout, network: true, unixSockets: ["/var/run/docker.sock"] });
  expect(allowed.trim().split("\n").slice(-3)).toEqual([
    "(deny network-outbound (remote unix-socket))",
    '(allow network-outbound (literal "/private/var/run/mDNSResponder"))',
    '(allow network-outbound (literal "/var/run/docker.sock"))',
  ]);
  expect(seatbeltProfile({ ...layout, network: true })).not.toContain("network-outbound)");
  expect(seatbeltProfile({ ...layout, mode: "read-only" })).not.toContain('(subpath "/w")');
});

test("no sandbox on this platform: the default refuses every command with one line (fail closed); an explicit mode is a usage error", () => {
  const workspace = realpathSync(tempDir("agent-sandbox-"));
  const request = { network: false, workspace, agentDir: join(workspace, ".agent"), stateRoot: join(workspace, ".agent", "state"), platform: "win32" as const };
  const closed = resolveSandbox({ ...request, explicit: false });
  expect(closed.sandbox.status).toBe("unavailable");
  expect(closed.warning).toMatch(/shell commands will be refused: the workspace-write sandbox cannot start here \(no sandbox for win32\); install bubblewrap/);
  for (const sandbox of [closed.sandbox, closed.sandbox.within(join(workspace, "other"))]) {
    expect(() => sandbox.command("echo hi", workspace)).toThrow(SandboxUnavailableError);
    expect(() => sandbox.command("echo hi", workspace)).toThrow(/^refused: commands run only inside the workspace-write sandbox, which cannot start here \(no sandbox for win32\); .*--sandbox danger-full-access/);
  }
  expect(() => resolveSandbox({ ...request, mode: "read-only", explicit: true })).toThrow(UsageError);
  const off = resolveSandbox({ ...request, mode: "danger-full-access", explicit: true }).sandbox;
  expect(off.status).toBe("off");
  expect(off.command("echo hi", workspace)).toEqual(["sh", "-c", "echo hi"]);
});

test("an untrusted project's config (config.json or config.local.json) cannot loosen the sandbox; trusted it can; the flag always wins", async () => {
  const { loadSettings } = await import("../../src/config/load.ts");
  const { mkdirSync, writeFileSync } = await import("node:fs");
  const workspace = realpathSync(tempDir("agent-sandbox-config-"));
  mkdirSync(join(workspace, ".agent"));
  writeFileSync(join(workspace, ".agent", "config.json"), JSON.stringify({ sandbox: { mode: "danger-full-access", network: true } }));
  const env = { XDG_CONFIG_HOME: join(workspace, "no-user-config") };
  const project = loadSettings({ workspace, env });
  expect(project.settings.sandbox).toEqual({ network: false, explicit: false });
  expect(project.ignored.flatMap((file) => file.settings.map((s) => s.key))).toEqual(["sandbox.mode", "sandbox.network"]);
  writeFileSync(join(workspace, ".agent", "config.json"), "{}");
  // A repository can ship config.local.json too: it is the project's until trusted.
  writeFileSync(join(workspace, ".agent", "config.local.json"), JSON.stringify({ sandbox: { mode: "danger-full-access", network: true } }));
  expect(loadSettings({ workspace, env }).settings.sandbox).toEqual({ network: false, explicit: false });
  expect(loadSettings({ workspace, env, projectTrusted: true }).settings.sandbox).toEqual({ mode: "danger-full-access", network: true, explicit: true });
  expect(loadSettings({ workspace, env, projectTrusted: true, flags: { sandbox: "read-only" } }).settings.sandbox.mode).toBe("read-only");
  // Stricter from the project is fine.
  writeFileSync(join(workspace, ".agent", "config.local.json"), "{}");
  writeFileSync(join(workspace, ".agent", "config.json"), JSON.stringify({ sandbox: { mode: "read-only" } }));
  expect(loadSettings({ workspace, env }).settings.sandbox).toEqual({ mode: "read-only", network: false, explicit: true });
});

test("within(): a worktree teammate's sandbox writes its own workspace, not the Lead's, and not its own .agent/", async () => {
  const { existsSync, mkdirSync } = await import("node:fs");
  const root = realpathSync(tempDir("agent-sandbox-within-"));
  const lead = join(root, "lead");
  const teammate = join(root, "lead", ".agent", "worktrees", "s", "alice");
  mkdirSync(teammate, { recursive: true });
  const { sandbox } = resolveSandbox({ network: false, workspace: lead, agentDir: join(lead, ".agent"), stateRoot: join(lead, ".agent", "state"), explicit: false });
  if (sandbox.status !== "bubblewrap") {
    if (process.env.CI) throw new Error(`the sandbox tests must run in CI, but the sandbox is ${sandbox.status}`);
    console.warn(`test/security: SKIPPED within(): no bubblewrap here (${sandbox.status})`);
    return;
  }
  const inner = sandbox.within(teammate);
  expect(inner.command("true", teammate).join(" ")).toContain(`--bind ${teammate} ${teammate} --ro-bind ${teammate}/.agent ${teammate}/.agent`);
  // The Lead's sandbox keeps .agent/ (and so the worktrees) read-only; the teammate's makes its worktree writable.
  const script = `touch mine.txt; touch ${join(lead, "leads.txt")}; touch .agent/config.json; echo done`;
  const run = Bun.spawnSync(inner.command(script, teammate), { cwd: teammate, stderr: "pipe" });
  expect(run.stdout.toString()).toContain("done");
  expect(existsSync(join(teammate, "mine.txt"))).toBe(true);
  expect(existsSync(join(lead, "leads.txt"))).toBe(false);
  expect(existsSync(join(teammate, ".agent", "config.json"))).toBe(false);
  const fromLead = Bun.spawnSync(sandbox.command(`touch ${join(teammate, "by-lead.txt")}`, lead), { cwd: lead, stderr: "pipe" });
  expect(fromLead.exitCode).not.toBe(0);
  expect(existsSync(join(teammate, "by-lead.txt"))).toBe(false);
});

test("bwrap: hidden paths — an empty read-only tmpfs over a directory, /dev/null over a file, before the workspace bind when outside it and after when inside; missing ones left out", async () => {
  const { mkdirSync, writeFileSync } = await import("node:fs");
  const root = realpathSync(tempDir("agent-sandbox-hidden-"));
  const [home, ws] = [join(root, "home"), join(root, "ws")];
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".pgpass"), "x");
  mkdirSync(join(ws, ".agent", "state"), { recursive: true });
  const concealed = [join(home, ".ssh"), join(home, ".pgpass"), join(ws, ".agent", "state"), join(home, ".netrc")];
  const args = bubblewrapArgs({ ...layout, workspace: ws, readOnly: [join(ws, ".agent")], concealed }, ws, ["true"]).slice(4).join(" ");
  expect(args).toContain(
    `--tmpfs ${home}/.ssh --remount-ro ${home}/.ssh --ro-bind /dev/null ${home}/.pgpass ` +
      `--bind ${ws} ${ws} --ro-bind ${ws}/.agent ${ws}/.agent --tmpfs ${ws}/.agent/state --remount-ro ${ws}/.agent/state --seccomp`,
  );
  expect(args).not.toContain(".netrc");
  // A hidden directory holding the workspace gets an open tmpfs, so the workspace's mount point can be made in it.
  const holding = bubblewrapArgs({ ...layout, workspace: ws, readOnly: [], concealed: [root] }, ws, ["true"]).slice(4).join(" ");
  expect(holding).toContain(`--tmpfs ${root} --bind ${ws} ${ws}`);
});

test("sandbox.hiddenPaths: every level's list counts (hiding only narrows); a relative path is a config error naming the file", async () => {
  const { loadSettings } = await import("../../src/config/load.ts");
  const { ConfigError } = await import("../../src/core/errors.ts");
  const { mkdirSync, writeFileSync } = await import("node:fs");
  const workspace = realpathSync(tempDir("agent-sandbox-hidden-config-"));
  const user = join(workspace, "xdg");
  mkdirSync(join(user, "agent"), { recursive: true });
  mkdirSync(join(workspace, ".agent"));
  writeFileSync(join(user, "agent", "config.json"), JSON.stringify({ sandbox: { hiddenPaths: ["~/.kube", "/srv/keys"] } }));
  writeFileSync(join(workspace, ".agent", "config.json"), JSON.stringify({ sandbox: { hiddenPaths: ["~/.kube", "~/.config/gcloud"] } }));
  const env = { XDG_CONFIG_HOME: user };
  const loaded = loadSettings({ workspace, env });
  expect(loaded.settings.sandbox.hiddenPaths).toEqual(["~/.kube", "/srv/keys", "~/.config/gcloud"]);
  expect(loaded.ignored).toEqual([]);
  writeFileSync(join(workspace, ".agent", "config.json"), JSON.stringify({ sandbox: { hiddenPaths: ["secrets"] } }));
  expect(() => loadSettings({ workspace, env })).toThrow(ConfigError);
  expect(() => loadSettings({ workspace, env })).toThrow(/\.agent\/config\.json: sandbox\.hiddenPaths: "secrets" is neither absolute nor under ~\/; name each path in full/);
});

test("bwrap: the guarded configuration (.mcp.json, skills/, config link targets, hook and MCP scripts) is bound read-only where it still is when a command starts", () => {
  const args = bubblewrapArgs({ ...layout, guarded: ["/w/.mcp.json", "/w/skills"] }, "/w", ["true"]).slice(4).join(" ");
  expect(args).toContain("--ro-bind /w/.agent /w/.agent --ro-bind-try /w/.mcp.json /w/.mcp.json --ro-bind-try /w/skills /w/skills --seccomp");
  const profile = seatbeltProfile({ ...layout, guarded: ["/w/.mcp.json"] });
  expect(profile).toContain('(deny file-write* (subpath "/w/.mcp.json"))');
});
