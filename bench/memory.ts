/**
 * Memory of idle teammates, through the real runtime (composition root,
 * mailbox, teammate loops) against the scripted model server on 127.0.0.1.
 *
 * The server runs in this process; each measurement runs in a child process of
 * its own (`bun bench/memory.ts measure <warm>`), so what is counted is the
 * agent's runtime alone — not the server's record of every request, nor its
 * streamed answers' garbage — and one warm count's compiled code does not carry
 * into the other's. A child builds a Lead's runtime, spawns `warm` teammates
 * first (what the first spawns load once — code, caches, the JIT's compiled code
 * — is not counted), waits until they are idle, then spawns
 * BENCH_MEMORY_TEAMMATES more (32 by default) that each answer once and go
 * idle. What the added teammates cost is the growth of the process between the
 * two quiet points, divided by their number:
 *
 *  - `rssPerTeammateMiB`: resident set size after a full GC,
 *  - `peakRssPerTeammateMiB`: the same with the peak RSS (getrusage maxrss), goal <= 0.5,
 *  - `heapPerTeammateKiB`: the JavaScript heap in use.
 *
 * Both warm counts are measured by default (BENCH_MEMORY_WARM="4,32"): after 4
 * warm teammates the figure still carries the JIT's tier-up of the code every
 * teammate runs, after 32 it is closer to what one more teammate holds. The
 * goal holds for both. The last line is one JSON object with the figures.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ScriptedModelServer } from "../test/support/model-server.ts";

const ADDED = Number(process.env.BENCH_MEMORY_TEAMMATES ?? 32);
const WARM = (process.env.BENCH_MEMORY_WARM ?? "4,32").split(",").map(Number);
const GOAL_MIB = 0.5;
const MIB = 1024 * 1024;

interface Sample {
  rss: number;
  peakRss: number;
  heap: number;
}

interface Figures {
  warm: number;
  teammates: number;
  rssPerTeammateMiB: number;
  peakRssPerTeammateMiB: number;
  heapPerTeammateKiB: number;
  rssMiB: number;
}

function sample(): Sample {
  Bun.gc(true);
  const usage = process.memoryUsage();
  // maxRSS is in KiB on Linux.
  return { rss: usage.rss, peakRss: process.resourceUsage().maxRSS * 1024, heap: usage.heapUsed };
}

/** One measurement, in the child process: the runtime's growth from `warm` idle teammates to `warm + ADDED`. */
async function measure(warm: number, baseUrl: string): Promise<Figures> {
  // Imported here: the parent, which only serves the model, does not load the runtime.
  const { loadSettings } = await import("../src/config/load.ts");
  const { buildLead } = await import("../src/app/lead.ts");
  const { runUntilQuiet } = await import("../src/app/until-quiet.ts");
  const dir = mkdtempSync(join(tmpdir(), "agent-bench-memory-"));
  try {
    const workspace = join(dir, "ws");
    mkdirSync(workspace);
    const { settings } = loadSettings({
      flags: { baseUrl, permissionMode: "bypassPermissions" },
      env: { OPENAI_API_KEY: "bench" },
      workspace,
    });
    const lead = await buildLead(settings, { stateDir: join(dir, "state"), workspace });
    const spawnIdle = async (from: number, count: number) => {
      for (let i = from; i < from + count; i++) await lead.team.spawn(`t${i}`, "worker", "answer done");
      await runUntilQuiet(lead);
    };
    await spawnIdle(0, warm);
    const before = sample();
    await spawnIdle(warm, ADDED);
    const after = sample();
    const idle = lead.team.list().filter((t) => t.state === "idle").length;
    await lead.close();
    if (idle !== warm + ADDED) throw new Error(`bench/memory: ${idle} of ${warm + ADDED} teammates idle`);
    const per = (field: keyof Sample) => (after[field] - before[field]) / ADDED;
    return {
      warm,
      teammates: ADDED,
      rssPerTeammateMiB: Number((per("rss") / MIB).toFixed(3)),
      peakRssPerTeammateMiB: Number((per("peakRss") / MIB).toFixed(3)),
      heapPerTeammateKiB: Number((per("heap") / 1024).toFixed(1)),
      rssMiB: Number((after.rss / MIB).toFixed(1)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function inChild(warm: number, baseUrl: string): Promise<Figures> {
  const child = Bun.spawn([process.execPath, import.meta.path, "measure", String(warm), baseUrl], { stdout: "pipe", stderr: "inherit" });
  const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
  if (code !== 0) throw new Error(`bench/memory: the measurement with ${warm} warm teammates exited ${code}`);
  return JSON.parse(out.trim().split("\n").at(-1)!) as Figures;
}

const [role, warmArg, urlArg] = process.argv.slice(2);
if (role === "measure") {
  console.log(JSON.stringify(await measure(Number(warmArg), urlArg!)));
} else {
  // Every request (a teammate's first prompt, the Lead's event turns) is answered at once, with text.
  const server = ScriptedModelServer.start([], { respond: () => ({ text: "done" }) });
  try {
    const all: Figures[] = [];
    for (const warm of WARM) {
      const figures = await inChild(warm, server.url);
      all.push(figures);
      const met = figures.peakRssPerTeammateMiB <= GOAL_MIB ? "met" : "MISSED";
      console.log(
        `${ADDED} idle teammates after ${warm} warm: peak RSS +${figures.peakRssPerTeammateMiB} MiB each (goal <= ${GOAL_MIB}: ${met}), ` +
          `RSS after GC +${figures.rssPerTeammateMiB} MiB each, JS heap +${figures.heapPerTeammateKiB} KiB each; process RSS ${figures.rssMiB} MiB`,
      );
    }
    console.log(JSON.stringify({ teammates: ADDED, byWarm: all }));
  } finally {
    await server.close();
  }
}
