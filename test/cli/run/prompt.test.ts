import { expect, test } from "bun:test";
import { readStdinUnlessSilent } from "../../../src/cli/bounded-read.ts";
import { readPrompt } from "../../../src/cli/run/prompt.ts";
import { UsageError } from "../../../src/core/errors.ts";

const stdin = (text: string | Uint8Array) => ({
  piped: true,
  read: async () => (typeof text === "string" ? new TextEncoder().encode(text) : text),
});
const noStdin = {
  piped: false,
  read: async (): Promise<Uint8Array> => {
    throw new Error("stdin must not be read");
  },
};

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error("expected a refusal");
}

test("the PROMPT operand or --prompt, verbatim", async () => {
  expect(await readPrompt({ positional: "  fix it\n" }, noStdin)).toBe("  fix it\n");
  expect(await readPrompt({ flag: "add tests" }, noStdin)).toBe("add tests");
});

test("- in either place reads all of stdin", async () => {
  expect(await readPrompt({ positional: "-" }, stdin("line 1\nline 2\n"))).toBe("line 1\nline 2\n");
  expect(await readPrompt({ flag: "-" }, stdin("from a pipe"))).toBe("from a pipe");
  // Neither given, data piped in: the data is the prompt.
  expect(await readPrompt({}, stdin("fix the test\n"))).toBe("fix the test\n");
  expect(await refusal(readPrompt({}, stdin("")))).toContain("the prompt from stdin is empty");
});

test("exactly one source", async () => {
  expect(await refusal(readPrompt({}, noStdin))).toContain("no prompt: give it as an argument");
  expect(await refusal(readPrompt({ positional: "a", flag: "b" }, noStdin))).toContain("not both");
});

test("an empty or blank prompt is refused, naming where it came from", async () => {
  expect(await refusal(readPrompt({ positional: "" }, noStdin))).toBe("the prompt from the PROMPT argument is empty; tell the agent what to do");
  expect(await refusal(readPrompt({ flag: " \n" }, noStdin))).toContain("the prompt from --prompt is empty");
  expect(await refusal(readPrompt({ positional: "-" }, stdin("")))).toContain("the prompt from stdin is empty");
});

test("stdin that is not UTF-8 is refused", async () => {
  expect(await refusal(readPrompt({ flag: "-" }, stdin(new Uint8Array([0xff, 0xfe, 0x41]))))).toContain("not valid UTF-8");
});

test("piped stdin with a prompt is appended as context, never dropped", async () => {
  expect(await readPrompt({ positional: "review this" }, stdin("diff --git a/x b/x\n+1\n"))).toBe(
    "review this\n\n<stdin>\ndiff --git a/x b/x\n+1\n</stdin>",
  );
  expect(await readPrompt({ flag: "summarise" }, stdin("no newline"))).toBe("summarise\n\n<stdin>\nno newline\n</stdin>");
  // An empty pipe adds nothing.
  expect(await readPrompt({ positional: "hi" }, stdin(" \n"))).toBe("hi");
  expect(await refusal(readPrompt({ positional: "hi" }, stdin(new Uint8Array([0xff]))))).toContain("the data piped to stdin is not valid UTF-8");
});

test("stdin held open and silent: no prompt without one, the prompt alone with a warning beside one; `-` waits for it", async () => {
  // What processStdin's read gives when the writer sends nothing for `quietMs`: undefined; read without a wait, the data.
  const silent = (later: string) => ({
    piped: true,
    read: async (quietMs?: number) => (quietMs === undefined ? new TextEncoder().encode(later) : undefined),
  });
  expect(await refusal(readPrompt({}, silent("late")))).toContain("no prompt: stdin is open but nothing was written to it in 3s");
  const warnings: string[] = [];
  expect(await readPrompt({ positional: "say hi" }, silent("late"), (warning) => warnings.push(warning))).toBe("say hi");
  expect(warnings).toEqual([
    "nothing arrived on stdin in 3s and it is still open: going on without it (redirect stdin from /dev/null, or close it, when there is nothing to pipe)",
  ]);
  expect(await readPrompt({ positional: "-" }, silent("late prompt"))).toBe("late prompt");
});

test("a silent writer is given up on after quietMs; one that writes is read to EOF", async () => {
  const held = new ReadableStream<Uint8Array>({ start() {} });
  expect(await readStdinUnlessSilent(100, "stdin", 20, held)).toBeUndefined();
  const written = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode("a"));
      controller.enqueue(new TextEncoder().encode("b"));
      controller.close();
    },
  });
  expect(new TextDecoder().decode(await readStdinUnlessSilent(100, "stdin", 60_000, written))).toBe("ab");
});
