import { describe, expect, test } from "bun:test";
import { SdkControl, SdkRequestError } from "../../../src/cli/run/sdk-control.ts";

// The SDK's side of stdin and stdout, line by line: what `agent` writes back to
// each control message, and what reaches the run. The process-level behaviour
// with the real SDK is test/compat/claude-sdk.test.ts.

/** A stdin the test writes lines to and closes; the lines `agent` wrote, parsed, and a wait for the next. */
function pipe() {
  const encoder = new TextEncoder();
  const chunks: Uint8Array[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  const stdin: AsyncIterable<Uint8Array> = {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (chunks.length > 0) yield chunks.shift()!;
        else if (closed) return;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
  const send = (value: unknown) => {
    chunks.push(encoder.encode(`${typeof value === "string" ? value : JSON.stringify(value)}\n`));
    wake?.();
  };
  const close = () => {
    closed = true;
    wake?.();
  };
  const out: Record<string, unknown>[] = [];
  let written: (() => void) | undefined;
  const write = (line: string) => {
    out.push(JSON.parse(line));
    written?.();
  };
  /** Resolves once `agent` has written `count` lines in all. */
  const lines = (count: number) =>
    new Promise<Record<string, unknown>[]>((resolve) => {
      const check = () => (out.length >= count ? resolve(out.slice()) : (written = check));
      check();
    });
  return { stdin, send, close, write, out, lines };
}

const initialize = (request: Record<string, unknown> = {}) => ({ type: "control_request", request_id: "init", request: { subtype: "initialize", ...request } });
const user = (text: string) => ({ type: "user", session_id: "", message: { role: "user", content: [{ type: "text", text }] }, parent_tool_use_id: null });

describe("SdkControl", () => {
  test("initialize is answered first and kept: its prompts (the SDK's empty default is none), its hook callback ids; user lines are the prompts", async () => {
    const io = pipe();
    io.send(initialize({ systemPrompt: [""], appendSystemPrompt: "be brief", hooks: { PreToolUse: [{ matcher: "Write", hookCallbackIds: ["hook_0"], timeout: 5 }] } }));
    const control = await SdkControl.open(io.stdin, io.write);
    expect(io.out[0]).toMatchObject({ type: "control_response", response: { subtype: "success", request_id: "init", response: { hooks_applied: true } } });
    expect(control.initialize).toEqual({ appendSystemPrompt: "be brief", hooks: { PreToolUse: [{ matcher: "Write", hookCallbackIds: ["hook_0"], timeout: 5 }] } });
    io.send(user("one"));
    io.send(user("two"));
    io.close();
    const prompts: string[] = [];
    for await (const prompt of control.prompts()) prompts.push(prompt);
    expect(prompts).toEqual(["one", "two"]);
  });

  test("without initialize the first line is the first prompt", async () => {
    const io = pipe();
    io.send({ type: "user", message: { role: "user", content: "hi" } });
    io.close();
    const control = await SdkControl.open(io.stdin, io.write);
    expect(control.initialize).toBeUndefined();
    const prompts: string[] = [];
    for await (const prompt of control.prompts()) prompts.push(prompt);
    expect(prompts).toEqual(["hi"]);
    expect(io.out).toEqual([]);
  });

  test("interrupt aborts the turn's signal and is answered; the next turn's signal is a new one", async () => {
    const io = pipe();
    io.send(initialize());
    const control = await SdkControl.open(io.stdin, io.write);
    const first = control.turnSignal();
    io.send({ type: "control_request", request_id: "stop", request: { subtype: "interrupt" } });
    const [, answer] = await io.lines(2);
    expect(answer).toEqual({ type: "control_response", response: { subtype: "success", request_id: "stop", response: { still_queued: [] } } });
    expect([first.aborted, control.interrupted]).toEqual([true, true]);
    const second = control.turnSignal();
    expect([second.aborted, control.interrupted]).toEqual([false, false]);
    io.close();
  });

  test("set_permission_mode and set_model before the runtime exists apply once it is bound; an unknown mode and an unknown request are error answers naming them", async () => {
    const io = pipe();
    io.send(initialize());
    const control = await SdkControl.open(io.stdin, io.write);
    io.send({ type: "control_request", request_id: "m", request: { subtype: "set_permission_mode", mode: "acceptEdits" } });
    io.send({ type: "control_request", request_id: "x", request: { subtype: "set_permission_mode", mode: "dontAsk" } });
    io.send({ type: "control_request", request_id: "model", request: { subtype: "set_model", model: "other" } });
    io.send({ type: "control_request", request_id: "u", request: { subtype: "rewind_files" } });
    const lines = await io.lines(5);
    expect(lines.slice(1).map((line) => line.response)).toEqual([
      { subtype: "success", request_id: "m", response: { mode: "acceptEdits" } },
      { subtype: "error", request_id: "x", error: expect.stringContaining('permission mode "dontAsk" is not supported') },
      { subtype: "success", request_id: "model", response: {} },
      { subtype: "error", request_id: "u", error: expect.stringContaining('control request "rewind_files"') },
    ]);
    const applied: string[] = [];
    control.bind({ setPermissionMode: (mode) => applied.push(`mode ${mode}`), setModel: (model) => applied.push(`model ${model}`) });
    expect(applied).toEqual(["mode acceptEdits", "model other"]);
    io.close();
  });

  test("can_use_tool: the SDK's allow carries its updatedInput, its deny its message; a cancelled question is withdrawn; a closed stdin fails what is pending", async () => {
    const io = pipe();
    io.send(initialize());
    const control = await SdkControl.open(io.stdin, io.write);
    const ask = (path: string, signal = new AbortController().signal) =>
      control.asker({ tool: "write_file", effect: "edit", subject: path, identity: "lead", input: { path }, callId: `call_${path}` }, signal);

    const allowed = ask("a.txt");
    const [, request] = await io.lines(2);
    expect(request).toMatchObject({ type: "control_request", request: { subtype: "can_use_tool", tool_name: "write_file", input: { path: "a.txt" }, tool_use_id: "call_a.txt" } });
    io.send({ type: "control_response", response: { subtype: "success", request_id: request!.request_id, response: { behavior: "allow", updatedInput: { path: "b.txt" } } } });
    expect(await allowed).toEqual({ answer: "yes", input: { path: "b.txt" } });

    const denied = ask("c.txt");
    const [, , second] = await io.lines(3);
    io.send({ type: "control_response", response: { subtype: "success", request_id: second!.request_id, response: { behavior: "deny", message: "not there" } } });
    expect(await denied).toEqual({ answer: "denied", reason: "not there" });

    const abort = new AbortController();
    const cancelled = ask("d.txt", abort.signal);
    const [, , , third] = await io.lines(4);
    abort.abort();
    await expect(cancelled).rejects.toBeInstanceOf(SdkRequestError);
    expect(io.out[4]).toEqual({ type: "control_cancel_request", request_id: third!.request_id });

    const pending = ask("e.txt");
    await io.lines(6);
    io.close();
    await expect(pending).rejects.toThrow("stdin closed before the SDK answered");
  });

  test("a line that is not JSON is a usage error naming its number, as the prompts' failure", async () => {
    const io = pipe();
    io.send(initialize());
    const control = await SdkControl.open(io.stdin, io.write);
    io.send("not json");
    io.close();
    const prompts = control.prompts()[Symbol.asyncIterator]();
    await expect(prompts.next()).rejects.toThrow("stdin line 2 is not JSON");
  });
});
