/**
 * The scripted model server as a process of its own (see
 * model-server-process.ts): reads `{ script, fallback }` as one JSON line on
 * stdin, prints `{ url }`, and on the line `close` (or stdin's end) prints what
 * it saw — each request's identity and arrival, the problems, the replies left —
 * and exits.
 */
import { type ScriptedReply, ScriptedModelServer } from "./model-server.ts";
import { readLines } from "./model-server-process.ts";

interface Setup {
  script: ScriptedReply[];
  fallback?: ScriptedReply;
}

const lines = readLines(Bun.stdin.stream());

const first = await lines.next();
if (first.done) process.exit(2);
const setup = JSON.parse(first.value) as Setup;
const fallback = setup.fallback;
const server = ScriptedModelServer.start(setup.script, fallback ? { respond: () => fallback } : {});
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
// Any further line, or the parent gone, ends it.
await lines.next();
const report = {
  requests: server.requests.map((request) => ({ identity: request.identity, at: request.at })),
  problems: server.problems,
  remaining: server.remaining,
};
await server.close();
process.stdout.write(`${JSON.stringify(report)}\n`);
process.exit(0);
