/**
 * grep benchmark. Generates a tree of 20 000 files, 200 MB of code-like text
 * (plus a few binary files and a .gitignore), then times the `grep` tool's
 * search function against `grep -rn` — and `rg` when it is installed — on the
 * same tree in the same run, the page cache warm for all of them.
 *
 * Two searches: a literal identifier (planted in a few files) and a regular
 * expression with no literal part every match must contain. Each is run
 * BENCH_GREP_RUNS times per tool, interleaved; the median counts. Every
 * searcher must report the same matching lines, or the bench fails.
 *
 * The last line is one JSON object; `ratio` is the worse of the two searches'
 * wall-clock ratios (ours / grep -r), the goal is <= 2. CPU time (user +
 * system) is reported beside it as `cpuRatio`: on a machine shared with other
 * work it moves less than wall time does.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { grepSearch } from "../src/search/grep-search.ts";

const FILES = Number(process.env.BENCH_GREP_FILES ?? 20_000);
const TOTAL_BYTES = Number(process.env.BENCH_GREP_BYTES ?? 200 * 1024 * 1024);
const RUNS = Number(process.env.BENCH_GREP_RUNS ?? 5);
const BINARY_EVERY = 200;
const PLANT_EVERY = 997;

const root = realpathSync(mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), "agent-bench-grep-")));

/** A small deterministic generator, so every run greps the same tree. */
function lcg(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const WORDS = [
  "const", "let", "return", "function", "async", "await", "import", "export", "from", "if", "else", "for",
  "while", "new", "this", "value", "result", "options", "context", "message", "history", "agent", "runner",
  "store", "config", "path", "error", "signal", "status", "request", "response", "handler", "queue", "task",
];

function makeLinePool(random: () => number): string[] {
  const pool: string[] = [];
  for (let i = 0; i < 4_000; i++) {
    const indent = "  ".repeat(Math.floor(random() * 4));
    const words = Array.from({ length: 3 + Math.floor(random() * 9) }, () => WORDS[Math.floor(random() * WORDS.length)]);
    const suffix = random() < 0.3 ? `(${Math.floor(random() * 1000)});` : random() < 0.5 ? " {" : ";";
    pool.push(`${indent}${words.join(" ")}${suffix}`);
  }
  return pool;
}

function generateTree(): { bytes: number } {
  const random = lcg(42);
  const pool = makeLinePool(random);
  const perFile = Math.floor(TOTAL_BYTES / FILES);
  let bytes = 0;
  // Rules that match nothing in the tree: their cost is measured, and grep -r sees the same files.
  writeFileSync(join(root, ".gitignore"), "node_modules/\ndist/\n*.log\n/coverage\n");
  for (let i = 0; i < FILES; i++) {
    const dir = join(root, `pkg${Math.floor(i / 1000)}`, `mod${Math.floor(i / 100) % 10}`);
    if (i % 100 === 0) mkdirSync(dir, { recursive: true });
    const lines: string[] = [];
    let size = 0;
    while (size < perFile) {
      const line = pool[Math.floor(random() * pool.length)]!;
      lines.push(line);
      size += line.length + 1;
    }
    if (i % PLANT_EVERY === 0) lines.splice(Math.floor(lines.length / 2), 0, `  registerHandler(needleWidget_${i}, QZX${1000 + i});`);
    const text = `${lines.join("\n")}\n`;
    const content = i % BINARY_EVERY === 7 ? Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1]), Buffer.from(text)]) : text;
    writeFileSync(join(dir, `file${i}.ts`), content);
    bytes += content.length;
  }
  return { bytes };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Matching lines as `path:line`, relative to the tree, sorted: what the searchers must agree on. */
function normalise(lines: string[]): string[] {
  return lines
    .filter((line) => line !== "" && line !== "--")
    .map((line) => {
      const rest = line.startsWith(`${root}/`) ? line.slice(root.length + 1) : line;
      const [path, number] = rest.split(":");
      return `${path}:${number}`;
    })
    .sort();
}

interface Timing {
  ms: number;
  cpuMs: number;
  lines: string[];
}

async function timeOurs(pattern: string): Promise<Timing> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const result = await grepSearch({
    pattern,
    workspace: root,
    start: root,
    mode: "content",
    limit: 1_000_000,
    protectedRoots: [],
    signal: new AbortController().signal,
  });
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { ms, cpuMs: (used.user + used.system) / 1000, lines: result.entries };
}

function timeCommand(argv: string[]): Timing {
  const start = performance.now();
  // stdout is a pipe, read to the end: GNU grep stops at the first match when it writes to /dev/null.
  const child = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
  const ms = performance.now() - start;
  if (child.exitCode !== 0 && child.exitCode !== 1) throw new Error(`${argv[0]} failed: ${child.stderr.toString()}`);
  const cpuMs = Number(child.resourceUsage.cpuTime.user + child.resourceUsage.cpuTime.system) / 1000;
  return { ms, cpuMs, lines: child.stdout.toString().split("\n") };
}

const hasRg = Bun.spawnSync(["sh", "-c", "command -v rg"]).exitCode === 0;

interface Searches {
  name: string;
  js: string;
  ere: string;
}
const SEARCHES: Searches[] = [
  { name: "literal", js: "needleWidget_", ere: "needleWidget_" },
  { name: "regex", js: "[A-Z]{3}[0-9]{4}\\)", ere: "[A-Z]{3}[0-9]{4}\\)" },
];

try {
  const generatedAt = performance.now();
  const { bytes } = generateTree();
  console.log(`tree: ${FILES} files, ${(bytes / 1024 / 1024).toFixed(0)} MB in ${((performance.now() - generatedAt) / 1000).toFixed(1)} s`);
  const figures: Record<string, number | boolean> = { files: FILES, megabytes: Math.round(bytes / 1024 / 1024), rg: hasRg };
  let worst = 0;
  for (const search of SEARCHES) {
    const runners: Record<string, () => Promise<Timing>> = {
      ours: () => timeOurs(search.js),
      grep: async () => timeCommand(["grep", "-rnE", search.ere, root]),
      ...(hasRg ? { rg: async () => timeCommand(["rg", "-n", "--no-heading", "-e", search.ere, root]) } : {}),
    };
    const times: Record<string, number[]> = {};
    const cpuTimes: Record<string, number[]> = {};
    let expected: string[] | undefined;
    // The first round warms the page cache and checks that every searcher finds the same lines.
    for (let run = 0; run <= RUNS; run++) {
      for (const [name, runner] of Object.entries(runners)) {
        const { ms, cpuMs, lines } = await runner();
        if (run === 0) {
          const found = normalise(lines);
          expected ??= found;
          if (found.length === 0 || JSON.stringify(found) !== JSON.stringify(expected)) {
            throw new Error(`${name} found ${found.length} lines for ${search.name}, expected ${expected.length}`);
          }
        } else {
          (times[name] ??= []).push(ms);
          (cpuTimes[name] ??= []).push(cpuMs);
        }
      }
    }
    const ours = median(times.ours!);
    const grep = median(times.grep!);
    const ratio = ours / grep;
    worst = Math.max(worst, ratio);
    figures[`${search.name}OursMs`] = Math.round(ours);
    figures[`${search.name}GrepMs`] = Math.round(grep);
    figures[`${search.name}Ratio`] = Number(ratio.toFixed(2));
    const cpuRatio = median(cpuTimes.ours!) / median(cpuTimes.grep!);
    figures[`${search.name}CpuRatio`] = Number(cpuRatio.toFixed(2));
    let line =
      `${search.name} (${expected!.length} lines): ours ${ours.toFixed(0)} ms (cpu ${median(cpuTimes.ours!).toFixed(0)}), ` +
      `grep -r ${grep.toFixed(0)} ms (cpu ${median(cpuTimes.grep!).toFixed(0)}), ratio ${ratio.toFixed(2)}, cpu ratio ${cpuRatio.toFixed(2)}`;
    if (times.rg) {
      const rg = median(times.rg);
      figures[`${search.name}RgMs`] = Math.round(rg);
      figures[`${search.name}RgRatio`] = Number((ours / rg).toFixed(2));
      line += `; rg ${rg.toFixed(0)} ms (cpu ${median(cpuTimes.rg!).toFixed(0)}), ratio to rg ${(ours / rg).toFixed(2)}`;
    }
    console.log(line);
  }
  figures.ratio = Number(worst.toFixed(2));
  figures.goal = 2;
  figures.met = worst <= 2;
  console.log(JSON.stringify(figures));
} finally {
  rmSync(root, { recursive: true, force: true });
}
