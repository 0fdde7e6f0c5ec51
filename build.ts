// Compiles src/main.ts into one self-contained executable, dist/agent, for this
// machine, with the version baked in, then runs it once to prove it starts.
import { rmSync } from "node:fs";
import { join } from "node:path";

const root = import.meta.dir;
const outfile = join(root, "dist", "agent");

function gitShortSha(): string | undefined {
  const git = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: root, stderr: "ignore" });
  const sha = git.stdout.toString().trim();
  return git.exitCode === 0 && sha.length > 0 ? sha : undefined;
}

const packageJson = (await Bun.file(join(root, "package.json")).json()) as { version: string };
const sha = gitShortSha();
// Semver build metadata: `0.1.0+abc1234` orders like `0.1.0` and names the commit.
const version = sha ? `${packageJson.version}+${sha}` : packageJson.version;

const result = await Bun.build({
  entrypoints: [join(root, "src", "main.ts")],
  compile: {
    outfile,
    // The binary runs in users' directories: it must not pick up their .env or
    // bunfig.toml (ours preloads test fixtures).
    autoloadDotenv: false,
    autoloadBunfig: false,
  },
  define: { AGENT_VERSION: JSON.stringify(version) },
  // Identifiers stay unminified: error class names show in `--verbose` output.
  minify: { whitespace: true, syntax: true },
  // Embedded in the executable, so --verbose stacks name src/ lines.
  sourcemap: "inline",
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  console.error("build: compile failed");
  process.exit(1);
}
// The map is embedded in the executable already; the copy Bun also writes beside
// it would only suggest the binary needs it.
rmSync(`${outfile}.map`, { force: true });

const smoke = Bun.spawnSync([outfile, "--version"], { stderr: "pipe" });
const printed = smoke.stdout.toString().trim();
if (smoke.exitCode !== 0 || printed !== version) {
  console.error(
    `build: smoke test failed: \`${outfile} --version\` exited ${smoke.exitCode} and printed ${JSON.stringify(printed)}, expected ${JSON.stringify(version)}`,
  );
  console.error(smoke.stderr.toString());
  process.exit(1);
}
console.error(`build: ${outfile} ${version}`);
