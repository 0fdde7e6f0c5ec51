import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../../src/core/errors.ts";
import { compileShellDeny, findShellDenial } from "../../src/tools/shell-deny.ts";
import { shellTool } from "../../src/tools/shell.ts";
import { call, workspaceContext } from "./helpers.ts";
import { waitUntil } from "../support/deadline.ts";

/** Whether a process runs (a zombie waiting to be reaped counts as gone). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

async function waitGone(pid: number): Promise<boolean> {
  for (let i = 0; i < 50 && alive(pid); i += 1) await Bun.sleep(20);
  return !alive(pid);
}

function pidIn(path: string): number {
  return Number(readFileSync(path, "utf8").trim());
}

describe("shell", () => {
  test("runs in the workspace, combines stdout and stderr in order, states the exit code", async () => {
    const context = workspaceContext();
    const result = await call(shellTool(), { command: "pwd; echo out; echo err >&2; echo out2; exit 3" }, context);
    expect(result).toEqual({ content: `${context.workspace}\nout\nerr\nout2\n[exit code 3]` });
    expect((await call(shellTool(), { command: "true" }, context)).content).toBe("(no output)\n[exit code 0]");
  });

  test("a timeout kills the command and the processes it started", async () => {
    const context = workspaceContext();
    const command = "sh -c 'echo $$ > inner.pid; exec sleep 30' & echo $$ > outer.pid; sleep 30";
    const started = Date.now();
    const result = await call(shellTool(), { command, timeout_ms: 300 }, context);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.isError).toBe(true);
    expect(result.content).toContain("[timed out after 300 ms; the command and its child processes were killed]");
    expect(await waitGone(pidIn(join(context.workspace, "outer.pid")))).toBe(true);
    expect(await waitGone(pidIn(join(context.workspace, "inner.pid")))).toBe(true);
  });

  test("the factory's timeout is the default for calls", async () => {
    const result = await call(shellTool({ timeoutMs: 200 }), { command: "sleep 30" }, workspaceContext());
    expect(result.content).toContain("timed out after 200 ms");
  });

  test("an abort kills the command group and throws", async () => {
    const controller = new AbortController();
    const context = workspaceContext({ signal: controller.signal });
    // Aborted once the command runs (its pid written), not after a time a loaded machine may not have started it in.
    void waitUntil(() => existsSync(join(context.workspace, "pid")) && readFileSync(join(context.workspace, "pid"), "utf8").endsWith("\n"), "the command to start").then(() => controller.abort());
    const outcome = await call(shellTool(), { command: "echo $$ > pid.tmp && mv pid.tmp pid; sleep 30 | cat" }, context).catch((e: Error) => e);
    expect(outcome).toBeInstanceOf(Error);
    expect(await waitGone(pidIn(join(context.workspace, "pid")))).toBe(true);
  });

  test("a background child holding the output pipe does not hang the call", async () => {
    const context = workspaceContext();
    const started = Date.now();
    const result = await call(shellTool(), { command: "sleep 10 & echo $! > bg.pid; echo started" }, context);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(result.content).toBe("started\n[exit code 0]");
    process.kill(pidIn(join(context.workspace, "bg.pid")), "SIGKILL");
  });

  test("output past the cap is cut with a note of how much was left out", async () => {
    const result = await call(shellTool(), { command: "head -c 60000 /dev/zero | tr '\\0' a" }, workspaceContext());
    expect(result.content.startsWith("a".repeat(50_000))).toBe(true);
    expect(result.content).toContain("\n[… 10000 more characters truncated; ");
    expect(result.content.endsWith("[exit code 0]")).toBe(true);
    expect(result.content.length).toBeLessThan(50_300);
  });

  test("a denied command is refused without running", async () => {
    const context = workspaceContext();
    const result = await call(shellTool(), { command: "touch ran; rm -rf /" }, context);
    expect(result.isError).toBe(true);
    expect(result.content).toStartWith("refused: this command recursively removes the root or the home directory");
    expect(existsSync(join(context.workspace, "ran"))).toBe(false);
  });

  test("config deny patterns extend the list; an invalid one is a ConfigError", async () => {
    const tool = shellTool({ deny: ["docker\\s+system\\s+prune"] });
    const result = await call(tool, { command: "docker system prune -af" }, workspaceContext());
    expect(result.content).toContain("matches a shell.deny pattern in config.json");
    expect(() => shellTool({ deny: ["(unclosed"] })).toThrow(ConfigError);
  });
});

describe("shell deny list", () => {
  const deny = compileShellDeny();
  const refused = [
    "rm -rf /",
    "rm -rf /*",
    "sudo rm -fr ~",
    "rm -r -f ~/",
    "cd /tmp && rm -rf $HOME",
    "rm --recursive --force /",
    "rm -rf --no-preserve-root /",
    "mkfs.ext4 /dev/sda1",
    "dd if=/dev/zero of=/dev/sda bs=1M",
    "cat image > /dev/sdb",
    "shutdown -h now",
    "sudo reboot",
    "systemctl poweroff",
    "halt",
    ":(){ :|:& };:",
    "chmod -R 777 /",
    "sudo chown -R me /",
    "git push --force origin main",
    "git push -f origin master",
    "git push origin +main",
  ];
  const allowed = [
    "rm -rf build",
    "rm -rf ./dist /tmp/agent-x",
    "rm -rf node_modules; ls /",
    "rm file.txt",
    "echo shutdown is near",
    "grep -r reboot src",
    "dd if=a of=b",
    "chmod -R u+w build",
    "git push origin main",
    "git push --force origin feature",
    "git commit -m 'rm -rf / is bad'",
  ];
  test.each(refused)("refuses %p", (command) => expect(findShellDenial(command, deny)).toBeDefined());
  test.each(allowed)("lets %p run", (command) => expect(findShellDenial(command, deny)).toBeUndefined());
});
