// `bun build.ts` compiles src/main.ts into one self-contained executable,
// dist/agent, for this machine, with the version baked in, then runs it once to
// prove it starts.
//
// `bun build.ts --release [--targets linux-x64,...] [--out DIR]` (npm run release)
// cross-compiles the release executables, `agent-<version>-<os>-<arch>[.exe]`,
// with install.sh and a SHA256SUMS file beside them, and runs the one this
// machine can run.
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { parseArgs } from "node:util";

const root = import.meta.dir;

/** The platforms a release is built for: our name → Bun's compile target. */
const RELEASE_TARGETS = {
  "linux-x64": "bun-linux-x64",
  "linux-arm64": "bun-linux-arm64",
  "darwin-x64": "bun-darwin-x64",
  "darwin-arm64": "bun-darwin-arm64",
  "windows-x64": "bun-windows-x64",
} as const satisfies Record<string, Bun.Build.CompileTarget>;
type Platform = keyof typeof RELEASE_TARGETS;

function fail(message: string): never {
  console.error(`build: ${message}`);
  process.exit(1);
}

function gitShortSha(): string | undefined {
  const git = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: root, stderr: "ignore" });
  const sha = git.stdout.toString().trim();
  return git.exitCode === 0 && sha.length > 0 ? sha : undefined;
}

interface CompileOptions {
  outfile: string;
  version: string;
  /** Cross-compile for this target; this machine's when absent. */
  target?: Bun.Build.CompileTarget;
}

async function compile({ outfile, version, target }: CompileOptions): Promise<void> {
  const result = await Bun.build({
    entrypoints: [join(root, "src", "main.ts")],
    compile: {
      outfile,
      ...(target ? { target } : {}),
      // The binary runs in users' directories: it must not pick up their .env or
      // bunfig.toml (ours preloads test fixtures).
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
    define: { AGENT_VERSION: JSON.stringify(version) },
    // Identifiers stay unminified, release too: error class names show in
    // `--verbose` output, and `keepNames` does not keep them for classes.
    minify: { whitespace: true, syntax: true },
    // Every build carries bytecode: start-up skips parsing (about half of it,
    // measured by bench/startup.ts). Bytecode of an ES module needs the format said.
    bytecode: true,
    format: "esm",
    // Embedded in the executable, so --verbose stacks name src/ lines.
    sourcemap: "inline",
  });
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    fail(`compiling ${basename(outfile)}${target ? ` for ${target}` : ""} failed (a cross-compile target's runtime is fetched from the npm registry: is it reachable?)`);
  }
  // The map is embedded in the executable already; the copy Bun also writes beside
  // it would only suggest the binary needs it.
  // (For `agent.exe` Bun names it `agent.map`.)
  rmSync(`${outfile.replace(/\.exe$/, "")}.map`, { force: true });
}

function smokeTest(file: string, version: string): void {
  const smoke = Bun.spawnSync([file, "--version"], { stderr: "pipe" });
  const printed = smoke.stdout.toString().trim();
  if (smoke.exitCode !== 0 || printed !== version) {
    console.error(smoke.stderr.toString());
    fail(`smoke test failed: \`${file} --version\` exited ${smoke.exitCode} and printed ${JSON.stringify(printed)}, expected ${JSON.stringify(version)}`);
  }
}

function hostPlatform(): Platform | undefined {
  const os = process.platform === "win32" ? "windows" : process.platform;
  const name = `${os}-${process.arch}`;
  return name in RELEASE_TARGETS ? (name as Platform) : undefined;
}

function releaseFileName(packageVersion: string, platform: Platform): string {
  return `agent-${packageVersion}-${platform}${platform.startsWith("windows-") ? ".exe" : ""}`;
}

function sha256(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

function parseTargets(text: string | undefined): Platform[] {
  if (text === undefined) return Object.keys(RELEASE_TARGETS) as Platform[];
  const names = text.split(",").map((t) => t.trim()).filter(Boolean);
  for (const name of names) {
    if (!(name in RELEASE_TARGETS)) fail(`unknown target ${JSON.stringify(name)}; known: ${Object.keys(RELEASE_TARGETS).join(", ")}`);
  }
  if (names.length === 0) fail("--targets is empty; give one or more of " + Object.keys(RELEASE_TARGETS).join(", "));
  return names as Platform[];
}

async function release(packageVersion: string, version: string, outDir: string, platforms: Platform[]): Promise<void> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const sums: string[] = [];
  for (const platform of platforms) {
    const outfile = join(outDir, releaseFileName(packageVersion, platform));
    await compile({ outfile, version, target: RELEASE_TARGETS[platform] });
    // `sha256sum -c SHA256SUMS` reads this format: hash, two spaces, name.
    sums.push(`${sha256(outfile)}  ${basename(outfile)}`);
    console.error(`build: ${outfile}`);
  }
  // The installer travels with the release, so one base URL serves both.
  copyFileSync(join(root, "install.sh"), join(outDir, "install.sh"));
  sums.push(`${sha256(join(outDir, "install.sh"))}  install.sh`);
  writeFileSync(join(outDir, "SHA256SUMS"), `${sums.join("\n")}\n`);
  const host = hostPlatform();
  if (host !== undefined && platforms.includes(host)) {
    smokeTest(join(outDir, releaseFileName(packageVersion, host)), version);
    console.error(`build: ${releaseFileName(packageVersion, host)} --version prints ${version}`);
  } else {
    console.error(`build: no smoke test: this machine (${process.platform}-${process.arch}) runs none of the built targets`);
  }
  console.error(`build: ${platforms.length} executables and SHA256SUMS in ${outDir}`);
}

const { values: options } = parseArgs({
  args: Bun.argv.slice(2),
  options: { release: { type: "boolean" }, targets: { type: "string" }, out: { type: "string" } },
  strict: true,
});
const packageJson = (await Bun.file(join(root, "package.json")).json()) as { version: string };
const sha = gitShortSha();
// Semver build metadata: `0.1.0+abc1234` orders like `0.1.0` and names the commit.
const version = sha ? `${packageJson.version}+${sha}` : packageJson.version;

if (options.release) {
  const outDir = resolve(options.out ?? join(root, "dist", "release"));
  await release(packageJson.version, version, outDir, parseTargets(options.targets));
} else {
  if (options.targets !== undefined || options.out !== undefined) fail("--targets and --out go with --release");
  const outfile = join(root, "dist", "agent");
  await compile({ outfile, version });
  smokeTest(outfile, version);
  console.error(`build: ${outfile} ${version}`);
}
