// Loaded before every test file (bunfig.toml): a private HOME and state dir per
// test process, and no API keys or endpoints leaking in from the developer's shell.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// Registers the temp-dir cleanup hook here, where bun applies hooks to every test
// file: registered from a test file's import it would only run for the first one.
import "./temp-dir.ts";

const home = mkdtempSync(join(tmpdir(), "agent-test-home-"));
process.env.HOME = home;
process.env.AGENT_STATE_DIR = join(home, "state");
for (const key of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_MODEL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "XDG_CONFIG_HOME"]) {
  delete process.env[key];
}
process.on("exit", () => rmSync(home, { recursive: true, force: true }));
