import { AgentError } from "../core/errors.ts";

type Parser = (typeof import("cron-parser"))["CronExpressionParser"];
let loaded: Parser | undefined;

/**
 * cron-parser (and luxon under it), loaded on the first expression read:
 * evaluating them took 8–20 ms of every run's start, before the first model
 * request, and most runs schedule nothing.
 */
function cronParser(): Parser {
  loaded ??= (require("cron-parser") as typeof import("cron-parser")).CronExpressionParser;
  return loaded;
}

export class InvalidCronError extends AgentError {
  readonly code = "INVALID_CRON";
  readonly category = "usage" as const;
  constructor(
    readonly expression: string,
    reason: string,
  ) {
    super(
      `invalid cron expression ${JSON.stringify(expression)}: ${reason}; ` +
        "use 5 fields: minute hour day-of-month month day-of-week, e.g. '*/15 * * * *' (every 15 minutes) or '0 9 * * 1-5' (09:00 on weekdays)",
    );
  }
}

/** The time zone cron fields are read in when none is given: the machine's, as `crontab` does. */
export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

// cron-parser also takes a seconds field, `@daily`-style aliases and Jenkins'
// `H` (a hash that moves with its seed). Each is refused up front: the tool
// promises standard 5-field cron, and a job must fire at the same times after a
// restart.
function refusal(fields: string[]): string | undefined {
  if (fields.length === 0) return "it is empty";
  if (fields[0]!.startsWith("@")) return "aliases such as @daily are not accepted";
  if (fields.length === 6) return "6 fields given; a seconds field is not supported";
  if (fields.length !== 5) return `${fields.length} field(s) given`;
  if (fields.some((field) => /(^|[^a-z])h/i.test(field))) return "the hashed `H` form is not supported";
  return undefined;
}

/**
 * The first run of `expression` strictly after `after`, read in `timeZone`.
 * Throws InvalidCronError for anything that is not a 5-field expression that
 * can fire (`0 0 30 2 *` never does).
 */
export function nextCronRun(expression: string, after: Date, timeZone: string = localTimeZone()): Date {
  const fields = expression.trim().split(/\s+/).filter((field) => field.length > 0);
  const refused = refusal(fields);
  if (refused) throw new InvalidCronError(expression, refused);
  try {
    return cronParser().parse(fields.join(" "), { currentDate: after, tz: timeZone }).next().toDate();
  } catch (error) {
    throw new InvalidCronError(expression, (error as Error).message);
  }
}

/** Whether `expression` is one nextCronRun accepts. */
export function isValidCron(expression: string): boolean {
  try {
    nextCronRun(expression, new Date(0), "UTC");
    return true;
  } catch {
    return false;
  }
}
