import { readFileSync, readdirSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import type { McpServers } from "../../src/mcp/config.ts";
import { McpManager } from "../../src/mcp/manager.ts";
import { deadline } from "../support/deadline.ts";

const root = resolve(import.meta.dir, "../..");
/** The real MCP test server from npm (a devDependency), run with node as its users do. */
export const EVERYTHING = join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
/** The hand-written failure server (fixtures/tiny-server.ts), run with bun. */
export const TINY = join(import.meta.dir, "fixtures/tiny-server.ts");

export const everythingStdio = () => ({ command: "node", args: [EVERYTHING, "stdio"] });
export const tiny = (...flags: string[]) => ({ command: process.execPath, args: [TINY, ...flags] });

const cleanups: (() => Promise<void> | void)[] = [];

/**
 * Closes the managers and stops the servers the last test started. Each test
 * file registers it (`afterEach(cleanUp)`): a hook registered here, in a shared
 * module, would only run for the first file that imports it.
 */
export async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

/** A manager closed after the test, with its warnings collected. */
export function manager(servers: McpServers, options: { toolTimeoutMs?: number; workspace?: string; env?: Record<string, string> } = {}) {
  const warnings: string[] = [];
  const mcp = new McpManager({
    servers,
    toolTimeoutMs: options.toolTimeoutMs ?? 30_000,
    workspace: options.workspace ?? root,
    client: { name: "agent-test", version: "0.0.0" },
    maxOutputChars: 50_000,
    env: options.env ?? (process.env as Record<string, string>),
    onWarning: (message) => warnings.push(message),
  });
  cleanups.push(() => mcp.close());
  return { mcp, warnings };
}

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/**
 * server-everything in its `streamableHttp` (or `sse`) mode on a free port; it
 * reads the port from PORT and says on stderr when it listens. A port taken in
 * the moment between choosing and listening is retried with another.
 */
export async function everythingHttp(mode: "streamableHttp" | "sse"): Promise<{ base: string; pid: number }> {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const port = await freePort();
    const proc = Bun.spawn({ cmd: ["node", EVERYTHING, mode], env: { ...process.env, PORT: String(port) }, stdout: "ignore", stderr: "pipe" });
    // Read to the end in the background: a closed stderr would kill the server at its next log line.
    const decoder = new TextDecoder();
    let text = "";
    const listening = Promise.withResolvers<boolean>();
    void (async () => {
      for await (const chunk of proc.stderr) {
        text += decoder.decode(chunk, { stream: true });
        if (/listening|running on port/i.test(text)) listening.resolve(true);
      }
      listening.resolve(false);
    })();
    await listening.promise;
    if (/listening|running on port/i.test(text)) {
      cleanups.push(async () => {
        proc.kill("SIGKILL");
        await proc.exited;
      });
      return { base: `http://127.0.0.1:${port}`, pid: proc.pid };
    }
    proc.kill("SIGKILL");
    await proc.exited;
  }
  throw new Error("server-everything did not start listening");
}

/**
 * Live processes whose command line contains `text`, as "pid args" lines, read
 * from /proc as `ps` does (a fresh machine or container may have no `ps`).
 */
export async function processesWith(text: string): Promise<string[]> {
  const lines: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || !alive(Number(entry))) continue;
    let args: string;
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim();
    } catch {
      continue; // gone since it was listed
    }
    if (args.includes(text)) lines.push(`${entry} ${args}`);
  }
  return lines;
}

/** Whether a process (by pid) is still alive (a zombie counts as gone). */
export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** Polls until `check` holds or `ms` pass. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<boolean> {
  const until = Date.now() + deadline(ms);
  while (Date.now() < until) {
    if (await check()) return true;
    await Bun.sleep(50);
  }
  return check();
}

/** Live processes (not zombies) whose environment holds `marker`: how a test finds the servers it started. */
export function processesWithEnv(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "latin1").includes(marker) && alive(Number(entry))) found.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}
