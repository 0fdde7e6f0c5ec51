import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** An executable hook script in the workspace, configured for `event` in the project's config (trusted by the run). */
export function hook(workspace: string, event: string, name: string, text: string): void {
  const dir = join(workspace, "hooks");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), text);
  chmodSync(join(dir, name), 0o755);
  mkdirSync(join(workspace, ".agent"), { recursive: true });
  const configPath = join(workspace, ".agent", "config.json");
  const config = existsSync(configPath) ? (JSON.parse(readFileSync(configPath, "utf8")) as { hooks?: Record<string, unknown[]> }) : {};
  config.hooks = { ...config.hooks, [event]: [{ command: `./hooks/${name}` }] };
  writeFileSync(configPath, JSON.stringify(config));
}

/** Resolves once `condition` holds, looking every 20 ms; fails after `ms` saying what it waited for. */
export async function until(condition: () => boolean, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${what}`);
    await Bun.sleep(20);
  }
}
