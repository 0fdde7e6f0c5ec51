import { describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StateRootRedirectedError } from "../../src/sessions/session-errors.ts";
import { assertOwnStateRoot, defaultStateRoot, userStateRoot, userStateRootChoice } from "../../src/sessions/state-root.ts";
import { tempDir } from "../support/temp-dir.ts";

const layout = () => {
  const root = realpathSync(tempDir("agent-state-root-"));
  const workspace = join(root, "My Repo");
  mkdirSync(workspace);
  return { root, workspace, state: join(workspace, ".agent", "state") };
};

describe("the default state root", () => {
  test("missing or plain directories pass; a symlinked .agent, .agent/state or a file in the way is refused", () => {
    const { root, workspace, state } = layout();
    expect(() => assertOwnStateRoot(workspace, state)).not.toThrow();
    mkdirSync(state, { recursive: true });
    expect(() => assertOwnStateRoot(workspace, state)).not.toThrow();

    const linked = layout();
    mkdirSync(join(linked.workspace, ".agent"));
    symlinkSync(root, linked.state);
    expect(() => assertOwnStateRoot(linked.workspace, linked.state)).toThrow(StateRootRedirectedError);
    // Even a link that stays inside the workspace: the repository chose where the state goes.
    const inside = layout();
    mkdirSync(join(inside.workspace, "elsewhere"));
    symlinkSync(join(inside.workspace, "elsewhere"), join(inside.workspace, ".agent"));
    expect(() => assertOwnStateRoot(inside.workspace, inside.state)).toThrow(/\.agent is a symlink/);

    // The sessions directory every new session is made in, too.
    const sessions = layout();
    mkdirSync(sessions.state, { recursive: true });
    symlinkSync(root, join(sessions.state, "sessions"));
    expect(() => assertOwnStateRoot(sessions.workspace, sessions.state)).toThrow(/state\/sessions is a symlink/);

    const file = layout();
    writeFileSync(join(file.workspace, ".agent"), "");
    expect(() => assertOwnStateRoot(file.workspace, file.state)).toThrow(/\.agent is not a directory/);
  });

  test('stateRoot "user" in the user file only: $XDG_STATE_HOME/agent/projects/<slug>-<hash of the real path>', () => {
    const { root, workspace } = layout();
    const config = join(root, "config");
    mkdirSync(join(config, "agent"), { recursive: true });
    const env = { XDG_CONFIG_HOME: config, XDG_STATE_HOME: join(root, "xdg-state") };
    expect(userStateRootChoice(env)).toBe("workspace");
    expect(defaultStateRoot(workspace, env)).toBe(join(workspace, ".agent", "state"));
    writeFileSync(join(config, "agent", "config.json"), JSON.stringify({ stateRoot: "user" }));
    expect(userStateRootChoice(env)).toBe("user");
    const userRoot = defaultStateRoot(workspace, env);
    expect(userRoot).toMatch(new RegExp(`^${join(root, "xdg-state", "agent", "projects")}/my-repo-[0-9a-f]{16}$`));
    // The same workspace through a symlink is the same project; another checkout is another.
    symlinkSync(workspace, join(root, "alias"));
    expect(userStateRoot(join(root, "alias"), env)).toBe(userRoot);
    mkdirSync(join(root, "other", "My Repo"), { recursive: true });
    expect(userStateRoot(join(root, "other", "My Repo"), env)).not.toBe(userRoot);
    // Without XDG_STATE_HOME: ~/.local/state.
    expect(userStateRoot(workspace, { HOME: "/home/u" })).toMatch(/^\/home\/u\/\.local\/state\/agent\/projects\/my-repo-/);
    // A user file the loader would refuse counts as unset here.
    writeFileSync(join(config, "agent", "config.json"), "{ not json");
    expect(userStateRootChoice(env)).toBe("workspace");
  });
});
