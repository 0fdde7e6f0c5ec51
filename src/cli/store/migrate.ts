import { defineCommand } from "citty";
import { UsageError } from "../../core/errors.ts";
import { loadWorkspaceSettings } from "../../trust/project-trust.ts";
import { PostgresConnection } from "../../postgres/connection.ts";
import { SCHEMA_VERSION, appliedMigrations } from "../../postgres/migrations.ts";
import { globalArgs, jsonArg } from "../args.ts";
import { resolveWorkspace } from "../run/workspace.ts";
import { writeJson, writeOut } from "../output.ts";
import { storeArg } from "./store-arg.ts";

export const migrateCommand = defineCommand({
  meta: {
    name: "migrate",
    description: "Bring the PostgreSQL store's schema to this version (also done on first use); prints the versions applied",
  },
  args: { ...storeArg, ...jsonArg, ...globalArgs },
  async run({ args }) {
    const { settings } = loadWorkspaceSettings({ workspace: resolveWorkspace(args.workspace), flags: { store: args.store } });
    if (settings.store.kind !== "postgres") {
      throw new UsageError("agent store migrate needs a PostgreSQL store: pass --store postgres://user@host:5432/db or set AGENT_STORE");
    }
    const connection = await PostgresConnection.open(settings.store.url, { max: 1 });
    try {
      const history = await appliedMigrations(connection.sql);
      if (args.json) {
        await writeJson({ store: connection.display, version: SCHEMA_VERSION, applied: connection.applied, migrations: history });
        return;
      }
      const names = new Map(history.map((m) => [m.version, m.name]));
      const applied = connection.applied.map((v) => `${v} (${names.get(v)})`).join(", ");
      await writeOut(
        `${connection.display}: schema at version ${SCHEMA_VERSION}; ${applied === "" ? "nothing to apply" : `applied ${applied}`}\n`,
      );
    } finally {
      await connection.close();
    }
  },
});
