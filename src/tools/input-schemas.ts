import type { z } from "zod";
import { ClaimTaskInput } from "./claim-task.ts";
import { CompleteTaskInput } from "./complete-task.ts";
import { CreateTaskInput } from "./create-task.ts";
import { EditFileInput } from "./edit-file.ts";
import { GetTaskInput } from "./get-task.ts";
import { GlobInput } from "./glob.ts";
import { GrepInput } from "./grep.ts";
import { ListTasksInput } from "./list-tasks.ts";
import { LoadSkillInput } from "./load-skill.ts";
import { MergeTeammateInput } from "./merge-teammate.ts";
import { ReadAttachmentInput } from "./read-attachment.ts";
import { ReadFileInput } from "./read-file.ts";
import { RequestShutdownInput } from "./request-shutdown.ts";
import { RespondShutdownInput } from "./respond-shutdown.ts";
import { ReviewPlanInput } from "./review-plan.ts";
import { ScheduleCronInput } from "./schedule-cron.ts";
import { SendMessageInput } from "./send-message.ts";
import { ShellBackgroundInput, ShellInput } from "./shell.ts";
import { SpawnTeammateGitInput, SpawnTeammateInput } from "./spawn-teammate.ts";
import { SubmitPlanInput } from "./submit-plan.ts";
import { TaskInput } from "./task.ts";
import { TodoWriteInput } from "./todo-write.ts";
import { WriteFileInput } from "./write-file.ts";

/**
 * The input schema of every built-in tool, by name: their JSON schemas are
 * generated from this list when the code is built (prebuilt-schemas.ts), and
 * one missing here is generated at its first model call instead.
 */
export const INPUT_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  ClaimTaskInput,
  CompleteTaskInput,
  CreateTaskInput,
  EditFileInput,
  GetTaskInput,
  GlobInput,
  GrepInput,
  ListTasksInput,
  LoadSkillInput,
  MergeTeammateInput,
  ReadAttachmentInput,
  ReadFileInput,
  RequestShutdownInput,
  RespondShutdownInput,
  ReviewPlanInput,
  ScheduleCronInput,
  SendMessageInput,
  ShellBackgroundInput,
  ShellInput,
  SpawnTeammateGitInput,
  SpawnTeammateInput,
  SubmitPlanInput,
  TaskInput,
  TodoWriteInput,
  WriteFileInput,
};
