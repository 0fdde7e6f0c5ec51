import { resolveProjectTrust } from "../trust/project-trust.ts";
import { trustSummaryLines } from "../trust/summary.ts";
import { resolveWorkspace } from "./run/workspace.ts";
import { isTerminal } from "../process/terminal.ts";

/**
 * On a terminal (stdin and stderr), the first `agent` or `agent run` in a
 * project whose files set what needs trust asks once, showing what trusting it
 * would enable; the answer is recorded either way, so the question comes back
 * only when those settings change. Headless, nothing is asked: the project
 * stays untrusted unless --trust-project, AGENT_TRUST_PROJECT=1 or `agent trust`.
 */
export async function askTrustOnTerminal(args: { workspace?: string; "trust-project"?: boolean }): Promise<void> {
  if (!isTerminal(0) || !isTerminal(2) || args["trust-project"] === true) return;
  const trust = resolveProjectTrust({ workspace: resolveWorkspace(args.workspace) });
  const { items, hash } = trust.fingerprint;
  if (trust.trusted || items.length === 0) return;
  if (trust.recorded?.decision === "declined" && trust.recorded.fingerprint === hash) return;
  const question = [
    "",
    `${trust.realPath} is not trusted. Its own files would enable:`,
    ...trustSummaryLines(items),
    "Without trust they are ignored (a project may only narrow your settings).",
    "Trust this project? [y/N] ",
  ].join("\n");
  const { createInterface } = await import("node:readline/promises");
  const readline = createInterface({ input: process.stdin, output: process.stderr, terminal: false });
  const closed = new Promise<null>((resolve) => readline.once("close", () => resolve(null)));
  let answer: string | null;
  try {
    answer = await Promise.race([readline.question(question), closed]);
  } finally {
    readline.close();
  }
  const yes = answer !== null && /^y(es)?$/i.test(answer.trim());
  trust.store.record(trust.realPath, { decision: yes ? "trusted" : "declined", fingerprint: hash, at: new Date().toISOString() });
  process.stderr.write(yes ? `trusted; recorded in ${trust.store.path}\n` : `not trusted; \`agent trust\` trusts it later\n`);
}
