import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { AgentName } from "../core/agent-name.ts";
import { CorruptStateFileError } from "../core/errors.ts";
import { UtcInstant } from "../core/message.ts";
import { ensureDir, isErrno, writeFileAtomic } from "../storage/atomic-file.ts";

export const TEAMMATE_STATES = ["running", "idle", "failed", "shutdown"] as const;
export const TeammateState = z.enum(TEAMMATE_STATES);
export type TeammateState = z.infer<typeof TeammateState>;

export const TeammateRecord = z.strictObject({
  name: AgentName,
  role: z.string().min(1),
  state: TeammateState,
  createdAtUtc: UtcInstant,
  updatedAtUtc: UtcInstant,
  /** Why it failed, when it did. */
  failure: z.string().optional(),
});
export type TeammateRecord = z.infer<typeof TeammateRecord>;

export const TeamFile = z.strictObject({
  version: z.literal(1),
  teammates: z.array(TeammateRecord),
});
export type TeamFile = z.infer<typeof TeamFile>;

/** `<state-dir>/team.json`: the teammates, written atomically, validated when read. */
export class TeamRegistry {
  readonly path: string;

  constructor(readonly stateDir: string) {
    this.path = join(stateDir, "team.json");
  }

  read(): TeammateRecord[] {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (error) {
      if (isErrno(error, "ENOENT")) return [];
      throw error;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new CorruptStateFileError(this.path, "not valid JSON");
    }
    const parsed = TeamFile.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new CorruptStateFileError(this.path, `${issue?.path.join(".") || "file"}: ${issue?.message ?? "invalid"}`);
    }
    return parsed.data.teammates;
  }

  write(teammates: TeammateRecord[]): void {
    ensureDir(this.stateDir);
    const file: TeamFile = { version: 1, teammates: [...teammates].sort((a, b) => a.createdAtUtc.localeCompare(b.createdAtUtc)) };
    writeFileAtomic(this.path, `${JSON.stringify(TeamFile.parse(file), null, 2)}\n`);
  }
}
