import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ScriptedModelServer, type ScriptedReply } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";

// `agent --version` and `agent mailbox show` start within 3x a bare bun
// (bench/startup.ts) only while they load neither zod nor a command they do not
// run: zod alone took more of their start-up than everything else together. The
// files on their path are read through hand-written checks instead (see
// core/plain-check.ts). A new static import that drags zod in fails here.

const root = join(import.meta.dir, "..", "..");
const preload = join(root, "test", "fixtures", "loaded-modules.ts");
const schemasBuilt = join(root, "test", "fixtures", "schemas-built.ts");

function loadedBy(args: string[], stateDir: string): { stdout: string; modules: string[] } {
  const out = join(tempDir("agent-loaded-"), "modules.txt");
  const child = Bun.spawnSync([process.execPath, "--preload", preload, join(root, "src", "main.ts"), ...args], {
    env: { ...process.env, LOADED_MODULES_OUT: out, AGENT_STATE_DIR: stateDir },
    stdout: "pipe",
    stderr: "pipe",
  });
  if (child.exitCode !== 0) throw new Error(`agent ${args.join(" ")} exited ${child.exitCode}: ${child.stderr}`);
  return { stdout: child.stdout.toString(), modules: readFileSync(out, "utf8").trim().split("\n") };
}

const zodModules = (modules: string[]) => modules.filter((path) => path.includes("/node_modules/zod/"));
// The lock directory's library (with graceful-fs) is for the fallback lock and the runtime lock only.
const lockfileModules = (modules: string[]) => modules.filter((path) => /\/node_modules\/(proper-lockfile|graceful-fs)\//.test(path));

describe("start-up of the commands scripts call most", () => {
  test("mailbox show loads no zod, and the check is not vacuous: mailbox send does", () => {
    const stateDir = tempDir("agent-startup-");
    const sent = loadedBy(["mailbox", "send", "--to", "lead", "--from", "ci", "--content", "hello"], stateDir);
    // Send builds its message through the zod schema: the probe sees zod when it is there.
    expect(zodModules(sent.modules).length).toBeGreaterThan(0);
    const id = sent.stdout.trim();

    const shown = loadedBy(["mailbox", "show", id], stateDir);
    expect(shown.stdout).toContain("hello");
    expect(zodModules(shown.modules)).toEqual([]);
    expect(lockfileModules(shown.modules)).toEqual([]);
    // A message found needs no lock: flock would load bun:ffi (~1 ms).
    expect(shown.modules.filter((path) => path === "bun:ffi")).toEqual([]);
    expect(shown.modules.some((path) => path.endsWith("src/mailbox/file-store.ts"))).toBe(true);

    const listed = loadedBy(["mailbox", "list"], stateDir);
    expect(listed.stdout).toContain(id);
    expect(zodModules(listed.modules)).toEqual([]);
  });

  test("--version loads nothing but the entry's own imports", () => {
    const { stdout, modules } = loadedBy(["--version"], tempDir("agent-startup-"));
    expect(stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect(zodModules(modules)).toEqual([]);
    // The command tree (and every command module behind it) is never loaded.
    expect(modules.filter((path) => path.endsWith("/src/cli/root.ts"))).toEqual([]);
  });
});

describe("help", () => {
  // Help is read from the commands' argument definitions; the runtime behind
  // `run`, `drain` and `worker` (hundreds of modules, zod among them) is loaded
  // only when the command runs.
  test("run, drain and worker --help load no runtime and no zod", () => {
    for (const command of ["run", "drain", "worker"]) {
      const { stdout, modules } = loadedBy([command, "--help"], tempDir("agent-startup-"));
      expect(stdout).toContain(`agent ${command}`);
      expect(modules.filter((path) => path.includes("/src/runtime/") || path.includes("/src/app/"))).toEqual([]);
      expect(zodModules(modules)).toEqual([]);
    }
  });
});

describe("agent run's path to its first model request", () => {
  /** The modules an `agent run` answered by `script` loaded, from the sources. */
  async function loadedByRun(script: ScriptedReply[]): Promise<string[]> {
    const server = ScriptedModelServer.start(script);
    try {
      const dir = tempDir("agent-loaded-run-");
      const out = join(dir, "modules.txt");
      const child = Bun.spawn(
        [process.execPath, "--preload", preload, join(root, "src", "main.ts"), "run", "hello", "--base-url", server.url, "--workspace", dir, "--state-dir", join(dir, "state")],
        { env: { ...process.env, LOADED_MODULES_OUT: out, OPENAI_API_KEY: "test-key" }, stdout: "ignore", stderr: "pipe" },
      );
      const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
      if (code !== 0) throw new Error(`agent run exited ${code}: ${stderr}`);
      server.assertDone();
      return readFileSync(out, "utf8").trim().split("\n");
    } finally {
      await server.close();
    }
  }
  const shellParser = (modules: string[]) => modules.filter((path) => path.includes("/node_modules/mvdan-sh/"));

  test("loads the shell parser (27–35 ms) only for a command line to check, not on the way to the first request", async () => {
    const answered = await loadedByRun([{ text: "hi" }]);
    expect(answered.some((path) => path.endsWith("src/runtime/agent-runner.ts"))).toBe(true);
    expect(shellParser(answered)).toEqual([]);
    // Not vacuous: a shell call is checked through it.
    const shelled = await loadedByRun([{ toolCalls: [{ name: "shell", arguments: { command: "echo hi" } }] }, { text: "done" }]);
    expect(shellParser(shelled).length).toBeGreaterThan(0);
  }, 60_000);

  /** The stacks of the zod schemas a run made before its first request (zod compiling none), and the modules it loaded. */
  async function schemasOfRun(extra: string[] = []): Promise<{ where: string[]; modules: string[] }> {
    const server = ScriptedModelServer.start([{ text: "hi" }]);
    try {
      const dir = tempDir("agent-schemas-run-");
      const out = join(dir, "schemas.json");
      const args = extra.map((arg) => arg.replace("$DIR", dir));
      for (const arg of args) if (arg.endsWith(".json") && arg.startsWith(dir)) writeFileSync(arg, JSON.stringify({ mcpServers: {} }));
      const child = Bun.spawn(
        [process.execPath, "--preload", schemasBuilt, "--preload", preload, join(root, "src", "main.ts"), "run", "hello", "--base-url", server.url, "--workspace", dir, "--state-dir", join(dir, "state"), ...args],
        { env: { ...process.env, SCHEMAS_BUILT_OUT: out, LOADED_MODULES_OUT: join(dir, "modules.txt"), OPENAI_API_KEY: "test-key" }, stdout: "ignore", stderr: "pipe" },
      );
      const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
      if (code !== 0) throw new Error(`agent run exited ${code}: ${stderr}`);
      server.assertDone();
      const { where, compiledBeforeFetch } = JSON.parse(readFileSync(out, "utf8")) as { where: string[]; compiledBeforeFetch: number };
      // zod runs jitless (src/core/lazy-schema.ts): compiling a parser for each object
      // schema at its first parse cost more than a run's few parses of it gain.
      expect(compiledBeforeFetch).toBe(0);
      return { where, modules: readFileSync(join(dir, "modules.txt"), "utf8").trim().split("\n") };
    } finally {
      await server.close();
    }
  }
  const builtByParse = (where: string[]) => where.filter((stack) => stack.includes("zod/v4/core/parse.js"));

  test("builds no zod schema before the first request (a module's are stand-ins built when first parsed with), and reads no config parser without a config file", async () => {
    const { where, modules } = await schemasOfRun();
    // Building every schema of every module evaluated cost ~20 ms of a 60 ms start:
    // a module's schema is a lazySchema stand-in, built when first parsed with.
    const builtUnused = where.filter((stack) => !stack.includes("new ZodLazy") && !stack.includes("zod/v4/core/parse.js"));
    expect(builtUnused.map((stack) => stack.split("\n").find((line) => line.includes("/src/")) ?? stack)).toEqual([]);
    // And none is parsed with: the run's flags and its first history records are
    // checked by plain checks (run-flags.ts, history-record-check.ts).
    expect(builtByParse(where).map((stack) => stack.split("\n").find((line) => line.includes("/src/")) ?? stack)).toEqual([]);
    // Not vacuous: the stand-ins are seen made…
    expect(where.some((stack) => stack.includes("new ZodLazy"))).toBe(true);
    expect(modules.filter((path) => path.includes("/node_modules/jsonc-parser/"))).toEqual([]);
    // …and a run that does parse with a schema before its request (an --mcp-config file) is seen building it.
    const withConfig = await schemasOfRun(["--mcp-config", "$DIR/mcp.json"]);
    expect(builtByParse(withConfig.where).some((stack) => stack.includes("src/config/mcp-config-file.ts"))).toBe(true);
  }, 60_000);

  test("asks libc whether stdin is a terminal: a headless run never builds process.stdin (~2.5 ms)", async () => {
    const server = ScriptedModelServer.start([{ text: "hi" }]);
    try {
      const dir = tempDir("agent-stdin-run-");
      const out = join(dir, "stdin.txt");
      const child = Bun.spawn(
        [process.execPath, "--preload", join(root, "test", "fixtures", "stdin-read.ts"), join(root, "src", "main.ts"), "run", "hello", "--base-url", server.url, "--workspace", dir, "--state-dir", join(dir, "state")],
        { env: { ...process.env, STDIN_READ_OUT: out, OPENAI_API_KEY: "test-key" }, stdin: "ignore", stdout: "ignore", stderr: "pipe" },
      );
      const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
      if (code !== 0) throw new Error(`agent run exited ${code}: ${stderr}`);
      server.assertDone();
      expect(readFileSync(out, "utf8")).toBe("");
    } finally {
      await server.close();
    }
  }, 60_000);

  test("reads a config file through jsonc-parser, loaded then", async () => {
    const dir = tempDir("agent-config-run-");
    mkdirSync(join(dir, ".agent"));
    writeFileSync(join(dir, ".agent", "config.json"), '{ "maxTurns": 3, /* a comment */ }');
    const out = join(dir, "modules.txt");
    const child = Bun.spawnSync([process.execPath, "--preload", preload, join(root, "src", "main.ts"), "config", "show", "--workspace", dir], {
      env: { ...process.env, LOADED_MODULES_OUT: out },
      stdout: "pipe",
      stderr: "pipe",
    });
    if (child.exitCode !== 0) throw new Error(`agent config show exited ${child.exitCode}: ${child.stderr}`);
    expect(child.stdout.toString()).toContain("maxTurns");
    expect(readFileSync(out, "utf8").split("\n").some((path) => path.includes("/node_modules/jsonc-parser/"))).toBe(true);
  });

  const cronParser = (modules: string[]) => modules.filter((path) => /\/node_modules\/(cron-parser|luxon)\//.test(path));

  test("loads cron-parser and luxon (8–20 ms) only for a cron expression to read", async () => {
    expect(cronParser(await loadedByRun([{ text: "hi" }]))).toEqual([]);
    // Not vacuous: scheduling a job reads its expression through it.
    const scheduled = await loadedByRun([
      { toolCalls: [{ name: "schedule_cron", arguments: { cron: "*/15 * * * *", prompt: "check", recurring: true, durable: false } }] },
      { text: "done" },
    ]);
    expect(cronParser(scheduled).length).toBeGreaterThan(0);
  }, 60_000);
});

// In the one-file bundle the binary is built from, an import of a builtin module is
// hoisted to the top and runs at every start, lazy command or not; so does a
// destructuring of globalThis.Bun (which loads bun:sql for SQL). Measured: each
// of node:crypto and bun:sql added several milliseconds to `agent --version`.
describe("the bundle's top level", () => {
  test("imports no builtin that is slow to load, and reads no lazily loaded Bun API", async () => {
    const built = await Bun.build({ entrypoints: [join(root, "src", "main.ts")], target: "bun", format: "esm" });
    expect(built.success).toBe(true);
    const text = await built.outputs[0]!.text();
    const slowImports = text.match(/^import .* from "(node:)?(crypto|child_process|stream|http|https|net|zlib|worker_threads|readline|util)";$/gm) ?? [];
    expect(slowImports).toEqual([]);
    expect(text.match(/^var \{[^}]*\} = globalThis\.Bun;$/gm) ?? []).toEqual([]);
  }, 60_000);
});

