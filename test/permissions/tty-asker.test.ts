import { describe, expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import type { PermissionRequest } from "../../src/permissions/policy.ts";
import { ANSWER_KEYS, createTtyAsker, isAnswer, parseAnswerKey } from "../../src/permissions/tty-asker.ts";
import { waitUntil } from "../support/deadline.ts";

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

/** Until the output holds `text`. */
async function shown(io: { written: () => string }, text: string): Promise<void> {
  await waitUntil(() => io.written().includes(text), () => `${JSON.stringify(text)} in ${JSON.stringify(io.written())}`);
}

describe("createTtyAsker", () => {
  test("prompts on the output stream and reads y/n lines, one question at a time", async () => {
    const io = streams();
    const ask = createTtyAsker(io);
    const signal = new AbortController().signal;
    const first = ask(request, signal);
    const second = ask({ ...request, subject: "rm build" }, signal);
    await shown(io, `lead wants to run shell (execute):\n  npm test\nallow? ${ANSWER_KEYS}: `);
    const answeredAt = io.written().length;
    io.input.write("yes\n");
    expect(await first).toEqual({ answer: "yes" });
    await shown(io, "rm build");
    // The second question came only once the first was answered.
    expect(io.written().indexOf("rm build")).toBeGreaterThanOrEqual(answeredAt);
    io.input.write("\n");
    expect(await second).toEqual({ answer: "no" });
  });

  test("an abort while waiting is a no", async () => {
    const controller = new AbortController();
    const answer = createTtyAsker(streams())(request, controller.signal);
    controller.abort();
    expect(await answer).toEqual({ answer: "no" });
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

describe("a line that is no answer", () => {
  test("answers nothing: the question is asked again, and the next answer counts", async () => {
    const io = streams();
    const answer = createTtyAsker(io)({ ...request, remember: { allow: ["shell(npm test)"], deny: [] } }, new AbortController().signal);
    await shown(io, "allow? ");
    io.input.write("add a readme\n");
    await shown(io, "not an answer: type y, n or e, or a or N then Enter: ");
    io.input.write("n\n");
    expect(await answer).toEqual({ answer: "no" });
    expect(io.written()).not.toContain("added allow rule");
    expect(["y", "yes", "a", "always", "n", "no", "N", "never", "e", "explain", "", " "].every(isAnswer)).toBe(true);
    expect(["add a readme", "yes please", "ok", "a b"].some(isAnswer)).toBe(false);
  });
});

describe("answers", () => {
  test("y, a, n, N and e, and everything else a no", () => {
    expect(["y", "YES", "a", "always", "n", "N", "never", "e", "", "sure"].map(parseAnswerKey)).toEqual([
      "yes", "yes", "always", "always", "no", "never", "never", "explain", "no", "no",
    ]);
  });

  test("e asks why, and the reason comes back with the no; a shows the rule it adds", async () => {
    const io = streams();
    const ask = createTtyAsker(io);
    const signal = new AbortController().signal;
    const remembered = { ...request, remember: { allow: ["shell(npm test)"], deny: ["shell(npm test)"] } };
    const explained = ask(remembered, signal);
    await shown(io, "(a adds: shell(npm test))");
    io.input.write("e\n");
    await shown(io, "why not? (sent to the model): ");
    io.input.write("use bun test instead\n");
    expect(await explained).toEqual({ answer: "no", reason: "use bun test instead" });
    const before = io.written().length;
    const always = ask(remembered, signal);
    await waitUntil(() => io.written().slice(before).includes("(a adds: shell(npm test))"), "the second question");
    io.input.write("a\n");
    expect(await always).toEqual({ answer: "always" });
    expect(io.written()).toContain("added allow rule for this session: shell(npm test)");
  });
});
