import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { seccompFilter } from "../../src/security/sandbox/seccomp.ts";
import { requirePrerequisite } from "../support/prerequisites.ts";
import { tempDir } from "../support/temp-dir.ts";

// `agent run` probes the default sandbox while it sets up its session. The
// sandbox never acts on an unknown verdict: used before the background probe is
// done (a hook, an MCP server, the runtime's git), it probes there and then.

const bwrap = Bun.which("bwrap");
const sandboxModule = join(import.meta.dir, "../../src/security/sandbox/sandbox.ts");

interface Seen {
  /** The first command's argv[0] (sh: it starts bwrap), or its refusal, asked before the background probe could finish. */
  early: string;
  status: string;
  warning: string | null;
  command: string;
  other: string;
}

/** Resolves the sandbox in a child whose PATH is `path`; `early` uses it in the same tick. */
function probeWith(path: string, early: boolean): Seen {
  const ws = tempDir("agent-probe-ws-");
  const script = `
    const { resolveSandboxInBackground } = await import(${JSON.stringify(sandboxModule)});
    const ws = ${JSON.stringify(ws)};
    const probing = resolveSandboxInBackground({ explicit: false, network: false, workspace: ws, agentDir: ws + "/.agent", stateRoot: ws + "/.agent", platform: "linux" });
    const other = probing.sandbox.within(ws + "/other");
    const use = (sandbox) => { try { return sandbox.command("true", ws)[0]; } catch (error) { return error.message; } };
    const early = ${early} ? use(other) : "";
    const warning = await probing.warning;
    console.log(JSON.stringify({ early, status: probing.sandbox.status, warning: warning ?? null, command: use(probing.sandbox), other: use(other) }));`;
  const child = Bun.spawnSync([process.execPath, "-e", script], { env: { ...process.env, PATH: path } });
  expect(child.stderr.toString()).toBe("");
  return JSON.parse(child.stdout.toString()) as Seen;
}

/** A PATH whose bwrap exists but cannot create a sandbox (user namespaces refused). */
function failingBwrapPath(): string {
  const bin = tempDir("agent-failing-bwrap-");
  mkdirSync(bin, { recursive: true });
  symlinkSync(Bun.which("sh")!, join(bin, "sh"));
  writeFileSync(join(bin, "bwrap"), "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n");
  chmodSync(join(bin, "bwrap"), 0o755);
  return bin;
}

const REFUSED = /^refused: commands run only inside the workspace-write sandbox, which cannot start here \(bwrap cannot create a sandbox here \(bwrap: No permissions/;

describe("the sandbox probed in the background", () => {
  test("a bwrap that cannot create the sandbox: the warning, and every command refused, another workspace's too", () => {
    const seen = probeWith(failingBwrapPath(), false);
    expect(seen.status).toBe("unavailable");
    expect(seen.warning).toMatch(/^shell commands will be refused: the workspace-write sandbox cannot start here \(bwrap cannot create a sandbox here \(bwrap: No permissions to create new namespace\)/);
    expect(seen.command).toMatch(REFUSED);
    expect(seen.other).toMatch(REFUSED);
  });

  test("used before the background probe is done, it probes then: the early command is refused, not wrapped on a guess", () => {
    const seen = probeWith(failingBwrapPath(), true);
    expect(seen.early).toMatch(REFUSED);
    expect(seen.status).toBe("unavailable");
    expect(seen.warning).toMatch(/^shell commands will be refused/);
    expect(seen.command).toMatch(REFUSED);
  });

  test("the probe starts bwrap itself, the seccomp program on its stdin: no sh in front of it", () => {
    // A PATH with a bwrap that records how it was started, and no sh: the probe
    // of a run is one process, not three (sh, its printf, bwrap).
    const bin = tempDir("agent-recording-bwrap-");
    writeFileSync(join(bin, "bwrap"), `#!/bin/sh\nprintf '%s\\n' "$@" > ${bin}/args\n/bin/cat > ${bin}/stdin\n`);
    chmodSync(join(bin, "bwrap"), 0o755);
    const seen = probeWith(bin, false);
    expect(seen).toMatchObject({ status: "bubblewrap", warning: null });
    const args = readFileSync(join(bin, "args"), "utf8").trimEnd().split("\n");
    expect(args.slice(args.indexOf("--seccomp"), args.indexOf("--seccomp") + 2)).toEqual(["--seccomp", "0"]);
    expect(args.slice(-2)).toEqual(["--", "true"]);
    expect([...readFileSync(join(bin, "stdin"))]).toEqual([...seccompFilter()!]);
  });

  if (requirePrerequisite("bwrap", bwrap ? undefined : "bubblewrap is not installed")) {
    test("a working bwrap: no warning, commands wrapped", () => {
      expect(probeWith(process.env.PATH ?? "", false)).toMatchObject({ status: "bubblewrap", warning: null, command: "sh", other: "sh" });
      expect(probeWith(process.env.PATH ?? "", true)).toMatchObject({ early: "sh", status: "bubblewrap", warning: null, command: "sh" });
    });
  }
});
