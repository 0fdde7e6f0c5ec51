/**
 * Memory of idle teammates, through the real runtime (composition root,
 * mailbox, teammate loops) against the scripted model server on 127.0.0.1:
 * a Lead's runtime spawns BENCH_MEMORY_WARM teammates first (32 by default: what
 * the first spawns load once — code, caches, the JIT's compiled code, which
 * tiers up over the first few dozen — is not counted), waits until they are idle, then spawns
 * BENCH_MEMORY_TEAMMATES more (32 by default) that each answer once and go
 * idle. What the added teammates cost is the growth of the process between the
 * two quiet points, divided by their number:
 *
 *  - `rssPerTeammateMiB`: resident set size after a full GC (goal <= 0.5),
 *  - `peakRssPerTeammateMiB`: the same with the peak RSS (getrusage maxrss),
 *  - `heapPerTeammateKiB`: the JavaScript heap in use.
 *
 * The last line is one JSON object with the figures.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSettings } from "../src/config/load.ts";
import { buildLead } from "../src/app/lead.ts";
import { runUntilQuiet } from "../src/app/until-quiet.ts";
import { ScriptedModelServer } from "../test/support/model-server.ts";

const WARM = Number(process.env.BENCH_MEMORY_WARM ?? 32);
const ADDED = Number(process.env.BENCH_MEMORY_TEAMMATES ?? 32);
const MIB = 1024 * 1024;

interface Sample {
  rss: number;
  peakRss: number;
  heap: number;
}

function sample(): Sample {
  Bun.gc(true);
  const usage = process.memoryUsage();
  // maxRSS is in KiB on Linux.
  return { rss: usage.rss, peakRss: process.resourceUsage().maxRSS * 1024, heap: usage.heapUsed };
}

const dir = mkdtempSync(join(tmpdir(), "agent-bench-memory-"));
// Every request (a teammate's first prompt, the Lead's event turns) is answered at once, with text.
const server = ScriptedModelServer.start([], { respond: () => ({ text: "done" }) });
try {
  const workspace = join(dir, "ws");
  mkdirSync(workspace);
  const { settings } = loadSettings({
    flags: { baseUrl: server.url, permissionMode: "bypassPermissions" },
    env: { OPENAI_API_KEY: "bench" },
    workspace,
  });
  const lead = await buildLead(settings, { stateDir: join(dir, "state"), workspace });
  const spawnIdle = async (from: number, count: number) => {
    for (let i = from; i < from + count; i++) await lead.team.spawn(`t${i}`, "worker", "answer done");
    await runUntilQuiet(lead);
  };
  await spawnIdle(0, WARM);
  const before = sample();
  await spawnIdle(WARM, ADDED);
  const after = sample();
  const idle = lead.team.list().filter((t) => t.state === "idle").length;
  await lead.close();
  if (idle !== WARM + ADDED) throw new Error(`bench/memory: ${idle} of ${WARM + ADDED} teammates idle`);
  const per = (field: keyof Sample) => (after[field] - before[field]) / ADDED;
  const figures = {
    teammates: ADDED,
    rssPerTeammateMiB: Number((per("rss") / MIB).toFixed(3)),
    peakRssPerTeammateMiB: Number((per("peakRss") / MIB).toFixed(3)),
    heapPerTeammateKiB: Number((per("heap") / 1024).toFixed(1)),
    rssMiB: Number((after.rss / MIB).toFixed(1)),
  };
  console.log(
    `${ADDED} idle teammates: RSS +${figures.rssPerTeammateMiB} MiB each (goal <= 0.5), peak RSS +${figures.peakRssPerTeammateMiB} MiB each, ` +
      `JS heap +${figures.heapPerTeammateKiB} KiB each; process RSS ${figures.rssMiB} MiB`,
  );
  console.log(JSON.stringify(figures));
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
