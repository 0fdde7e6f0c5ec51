import { describe, expect, test } from "bun:test";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { localDate, localZoneIsUtc } from "../../src/instructions/local-date.ts";
import { tempDir } from "../support/temp-dir.ts";

describe("the local date without the zone database", () => {
  test("UTC is known from TZ, or from /etc/localtime's link when TZ is unset", () => {
    for (const tz of ["UTC", ":UTC", "Etc/UTC", "UTC0", "GMT", "Zulu"]) expect(localZoneIsUtc({ TZ: tz }, "/nonexistent")).toBe(true);
    for (const tz of ["Europe/Berlin", "CET-1CEST,M3.5.0,M10.5.0/3", "", "UTC+3"]) expect(localZoneIsUtc({ TZ: tz }, "/nonexistent")).toBe(false);
    const dir = tempDir();
    const link = (name: string, target: string) => {
      symlinkSync(target, join(dir, name));
      return join(dir, name);
    };
    expect(localZoneIsUtc({}, link("utc", "/usr/share/zoneinfo/Etc/UTC"))).toBe(true);
    expect(localZoneIsUtc({}, link("mac", "/var/db/timezone/zoneinfo/UTC"))).toBe(true);
    expect(localZoneIsUtc({}, link("berlin", "../usr/share/zoneinfo/Europe/Berlin"))).toBe(false);
    // A copied zone file, or none at all: not known, so the Date API is asked.
    writeFileSync(join(dir, "copied"), "TZif");
    expect(localZoneIsUtc({}, join(dir, "copied"))).toBe(false);
    expect(localZoneIsUtc({}, join(dir, "missing"))).toBe(false);
    // TZ wins over the link, as for the C library and the Date API.
    expect(localZoneIsUtc({ TZ: "Asia/Tokyo" }, join(dir, "utc"))).toBe(false);
  });

  test("the date is the zone's: UTC's from the instant, another zone's from the Date API", () => {
    const instant = "2026-03-04T23:30:00Z";
    expect(localDate(new Date(instant), true)).toBe("2026-03-04");
    const script = `import { environmentFacts } from ${JSON.stringify(join(import.meta.dir, "../../src/instructions/environment.ts"))};
      console.log(environmentFacts("/nonexistent", { now: () => new Date(${JSON.stringify(instant)}) } as never).date);`;
    const dateIn = (tz: string) => {
      const child = Bun.spawnSync([process.execPath, "-e", script], { env: { ...process.env, TZ: tz } });
      expect(child.exitCode).toBe(0);
      return child.stdout.toString().trim();
    };
    expect(dateIn("UTC")).toBe("2026-03-04");
    expect(dateIn("Asia/Tokyo")).toBe("2026-03-05");
    expect(dateIn("America/New_York")).toBe("2026-03-04");
  });
});
