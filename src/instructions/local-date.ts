import { readlinkSync } from "node:fs";

/** The names of UTC itself (a TZ value, or the tail of /etc/localtime's link into a zoneinfo tree). */
const UTC_ZONES = new Set(["UTC", "UTC0", "Etc/UTC", "UCT", "Etc/UCT", "Universal", "Etc/Universal", "Zulu", "Etc/Zulu", "GMT", "GMT0", "Etc/GMT"]);

/**
 * Whether the process's local time is UTC, known without the time-zone database:
 * TZ names UTC, or TZ is unset and /etc/localtime links to a UTC zone file (as in
 * most containers and CI machines). False when unsure — the caller then asks the
 * Date API, whose first local-time call loads the zone rules (5–60 ms, measured
 * on the path to the first model request).
 */
export function localZoneIsUtc(env: Record<string, string | undefined>, localtime = "/etc/localtime"): boolean {
  const tz = env.TZ;
  if (tz !== undefined) return UTC_ZONES.has(tz.startsWith(":") ? tz.slice(1) : tz);
  let target: string;
  try {
    target = readlinkSync(localtime);
  } catch {
    return false;
  }
  const zone = /zoneinfo\/(.+)$/.exec(target)?.[1];
  return zone !== undefined && UTC_ZONES.has(zone);
}

/** The local calendar date of `now`, YYYY-MM-DD; `utc` (localZoneIsUtc) skips the zone lookup. */
export function localDate(now: Date, utc: boolean): string {
  if (utc) return now.toISOString().slice(0, 10);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}
