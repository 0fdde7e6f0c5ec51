import { UsageError } from "../../core/errors.ts";

/** Where `agent run` takes its prompt from: the PROMPT operand or `--prompt`; `-` in either means stdin. */
export interface PromptSource {
  positional?: string;
  flag?: string;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The prompt from exactly one source; refuses none, two, an empty one, or stdin that is not UTF-8. */
export async function readPrompt(
  source: PromptSource,
  readStdin: () => Promise<Uint8Array> = () => Bun.stdin.bytes(),
): Promise<string> {
  const { positional, flag } = source;
  if (positional !== undefined && flag !== undefined) {
    throw new UsageError("give the prompt once: as the PROMPT argument or with --prompt, not both");
  }
  const given = positional ?? flag;
  if (given === undefined) {
    throw new UsageError('no prompt: give it as an argument (agent run "fix the tests"), with --prompt TEXT, or - to read it from stdin');
  }
  const fromStdin = given === "-";
  let text = given;
  if (fromStdin) {
    try {
      text = utf8.decode(await readStdin());
    } catch {
      throw new UsageError("the prompt on stdin is not valid UTF-8 text");
    }
  }
  if (text.trim().length === 0) {
    const from = fromStdin ? "stdin" : positional !== undefined ? "the PROMPT argument" : "--prompt";
    throw new UsageError(`the prompt from ${from} is empty; tell the agent what to do`);
  }
  return text;
}
