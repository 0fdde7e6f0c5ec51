/**
 * The scripted model server (model-server.ts) in a child process, as a real
 * model API is: its request parsing and streaming run on another event loop,
 * not on the one the agents under measurement share. For benchmarks whose
 * figure is the runtime's own time; the replies must be plain data (no gates,
 * checks or holds, which cannot cross the process boundary).
 */
import { join } from "node:path";
import type { ScriptedReply } from "./model-server.ts";

export interface ServerProcessReport {
  requests: { identity?: string; at: number }[];
  problems: string[];
  remaining: number;
}

export class ModelServerProcess {
  readonly url: string;
  readonly #child: Bun.Subprocess<"pipe", "pipe", "inherit">;
  readonly #lines: AsyncGenerator<string>;

  private constructor(url: string, child: Bun.Subprocess<"pipe", "pipe", "inherit">, lines: AsyncGenerator<string>) {
    this.url = url;
    this.#child = child;
    this.#lines = lines;
  }

  /** Starts the server with `script`; a request no reply is left for gets `fallback` (an error without one). */
  static async start(script: ScriptedReply[], fallback?: ScriptedReply): Promise<ModelServerProcess> {
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "model-server-child.ts")], {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "inherit",
    });
    const lines = readLines(child.stdout);
    child.stdin.write(`${JSON.stringify({ script, fallback })}\n`);
    await child.stdin.flush();
    const first = await lines.next();
    if (first.done) throw new Error(`the model server process exited before it listened (status ${await child.exited})`);
    return new ModelServerProcess((JSON.parse(first.value) as { url: string }).url, child, lines);
  }

  /** Stops the server; throws when a reply was left unused or a request found none. */
  async close(): Promise<ServerProcessReport> {
    this.#child.stdin.write("close\n");
    await this.#child.stdin.end();
    const line = await this.#lines.next();
    await this.#child.exited;
    if (line.done) throw new Error("the model server process exited without its report");
    const report = JSON.parse(line.value) as ServerProcessReport;
    const problems = [...report.problems];
    if (report.remaining > 0) problems.push(`${report.remaining} scripted repl(ies) never requested`);
    if (problems.length > 0) throw new Error(`scripted model server: ${problems.join("; ")}`);
    return report;
  }
}

/** The stream's text, a line at a time (without the newline). */
export async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of stream) {
    buffered += decoder.decode(chunk, { stream: true });
    for (let at = buffered.indexOf("\n"); at >= 0; at = buffered.indexOf("\n")) {
      yield buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
    }
  }
}
