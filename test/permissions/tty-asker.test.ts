import { describe, expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import type { PermissionRequest } from "../../src/permissions/policy.ts";
import { createTtyAsker } from "../../src/permissions/tty-asker.ts";

const request: PermissionRequest = { tool: "shell", effect: "execute", subject: "npm test", identity: "lead" };

function streams() {
  const input = new PassThrough();
  const output = new PassThrough();
  let written = "";
  output.on("data", (chunk: Buffer) => {
    written += chunk.toString();
  });
  return { input, output, written: () => written };
}

describe("createTtyAsker", () => {
  test("prompts on the output stream and reads y/n lines, one question at a time", async () => {
    const io = streams();
    const ask = createTtyAsker(io);
    const signal = new AbortController().signal;
    const first = ask(request, signal);
    const second = ask({ ...request, subject: "rm build" }, signal);
    await Bun.sleep(20);
    expect(io.written()).toContain("lead wants to run shell (execute):\n  npm test\nallow? [y/N] ");
    expect(io.written()).not.toContain("rm build");
    io.input.write("yes\n");
    expect(await first).toBe(true);
    await Bun.sleep(20);
    expect(io.written()).toContain("rm build");
    io.input.write("\n");
    expect(await second).toBe(false);
  });

  test("an abort while waiting is a no", async () => {
    const controller = new AbortController();
    const answer = createTtyAsker(streams())(request, controller.signal);
    controller.abort();
    expect(await answer).toBe(false);
  });

  test("a closed input fails instead of waiting for ever, also for a later question", async () => {
    const io = streams();
    const ask = createTtyAsker(io);
    const signal = new AbortController().signal;
    const answer = ask(request, signal);
    io.input.end();
    await expect(answer).rejects.toThrow("stdin closed before an answer");
    await expect(ask(request, signal)).rejects.toThrow("stdin is closed");
  });
});
